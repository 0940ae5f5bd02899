import Foundation
import StageKit
import TestSupport
import Testing

@testable import PipelineKit

#if canImport(Glibc)
    import Glibc
#endif

/// Finding a batch's files: every entry of a tree is either a file of the batch or passed over with its reason.
@Suite struct InputDiscoveryTests {
    /// A tree of 603 files over three folders (more entries per folder than one thread looks at in a go), and
    /// one entry of each kind that is passed over.
    private func tree() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("discovery-\(UUID().uuidString)")
        let manager = FileManager.default
        try manager.createDirectory(at: root.appendingPathComponent("sub/deeper"), withIntermediateDirectories: true)
        for index in 0..<300 {
            try Data("\(index)".utf8).write(to: root.appendingPathComponent(String(format: "f%03d.txt", index)))
            try Data("s\(index)".utf8).write(to: root.appendingPathComponent(String(format: "sub/g%03d.txt", index)))
        }
        for name in ["a.txt", "b.txt", "c.txt"] {
            try Data(name.utf8).write(to: root.appendingPathComponent("sub/deeper/\(name)"))
        }
        try Data("hidden".utf8).write(to: root.appendingPathComponent(".hidden"))
        try Data("temporary".utf8).write(to: root.appendingPathComponent("skip.tmp"))
        try manager.createSymbolicLink(
            atPath: root.appendingPathComponent("broken").path, withDestinationPath: "/nonexistent/target")
        #expect(mkfifo(root.appendingPathComponent("fifo").path, 0o644) == 0)
        return root
    }

    @Test func aTreeIsFoundWholeInTheLedgersOrderWithEveryEntryAccountedFor() throws {
        let root = try tree()
        defer { try? FileManager.default.removeItem(at: root) }
        let discovery = try InputDiscovery.discover(
            paths: [root.path], include: [], exclude: ["*.tmp"], recursive: true)
        let relativePaths = discovery.files.map(\.input.relativePath)
        #expect(relativePaths.count == 603)
        #expect(Set(relativePaths).count == 603)
        #expect(
            zip(relativePaths, relativePaths.dropFirst()).allSatisfy {
                Array($0.utf8).lexicographicallyPrecedes($1.utf8)
            })
        #expect(relativePaths.first == "f000.txt" && relativePaths.last == "sub/g299.txt")
        #expect(relativePaths.contains("sub/deeper/b.txt"))
        for file in discovery.files.prefix(5) + discovery.files.suffix(5) {
            var info = stat()
            #expect(stat(file.input.path, &info) == 0)
            #expect(file.stamp.inode == Int64(info.st_ino) && file.stamp.size == Int64(info.st_size))
            #expect(file.stamp.path == file.input.path && file.input.path.hasSuffix("/" + file.input.relativePath))
        }
        let reasons = Dictionary(
            uniqueKeysWithValues: discovery.passedOver.map {
                (($0.path as NSString).lastPathComponent, $0.reason.description)
            })
        #expect(
            reasons == [
                ".hidden": "hidden", "skip.tmp": "excluded by *.tmp", "broken": "a broken link",
                "fifo": "not a regular file",
            ])
        #expect(Set(discovery.folders) == [root.path, root.path + "/sub", root.path + "/sub/deeper"])
    }

    @Test func withoutRecursionFoldersArePassedOverWithTheSettingThatTakesThemIn() throws {
        let root = try tree()
        defer { try? FileManager.default.removeItem(at: root) }
        let discovery = try InputDiscovery.discover(
            paths: [root.path], include: ["f1*"], exclude: [], recursive: false)
        #expect(discovery.files.map(\.input.relativePath) == (100..<200).map { String(format: "f%03d.txt", $0) })
        let reasons = Dictionary(
            uniqueKeysWithValues: discovery.passedOver.map {
                (($0.path as NSString).lastPathComponent, $0.reason.description)
            })
        #expect(reasons["sub"] == "a folder (set inputs.recursive to go into folders)")
        #expect(reasons["f000.txt"] == "not included by f1*")
        #expect(discovery.folders == [root.path])
    }

    @Test func aLinkBackToAScannedFolderIsPassedOverAndNoFolderStaysOpen() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("loop-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("a"), withIntermediateDirectories: true)
        try Data("f".utf8).write(to: root.appendingPathComponent("a/f.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("a/up").path, withDestinationPath: "..")
        let open = { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count }
        let before = try open()
        let discovery = try InputDiscovery.discover(paths: [root.path], include: [], exclude: [], recursive: true)
        #expect(try open() == before)
        #expect(discovery.files.map(\.input.relativePath) == ["a/f.txt"])
        #expect(discovery.passedOver.map(\.reason) == [.sameFolder(as: root.path)])
    }

    @Test func filesAndFoldersSharingANamesStartAreFoundInTheByteOrderOfRelativePaths() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("order-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        // `.`, `-` and ` ` come before `/`, and `0` after it: a folder's files sort among its siblings by
        // the folder's name and a `/`.
        let paths = [
            "a/x.txt", "a/b/y.txt", "a.txt", "a-b.txt", "a b.txt", "a0.txt", "ab.txt", "a.d/z.txt", "b/c.txt",
            "b.txt", "é/1.txt", "Z.txt",
        ]
        for path in paths {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(path.utf8).write(to: url)
        }
        let discovery = try InputDiscovery.discover(paths: [root.path], include: [], exclude: [], recursive: true)
        let expected = paths.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        #expect(discovery.files.map(\.input.relativePath) == expected)
        #expect(discovery.files.map(\.input.path) == expected.map { root.path + "/" + $0 })
    }

    @Test func aFolderReachedTwiceAtOneDepthIsScannedAtTheFirstPathInPlanningOrder() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("twice-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("real"), withIntermediateDirectories: true)
        try Data("f".utf8).write(to: root.appendingPathComponent("real/f.txt"))
        // The links are made in a random order (a folder lists its entries in an order of its own, which may be
        // the order they were made in).
        let random = SeededRandom("aFolderReachedTwiceAtOneDepthIsScannedAtTheFirstPathInPlanningOrder")
        let links = (0..<20).map { String(format: "l%02d", $0) }
        for name in shuffled(links, by: random) {
            try FileManager.default.createSymbolicLink(
                atPath: root.appendingPathComponent(name).path, withDestinationPath: "real")
        }
        let discovery = try InputDiscovery.discover(paths: [root.path], include: [], exclude: [], recursive: true)
        #expect(discovery.files.map(\.input.relativePath) == ["l00/f.txt"])
        let first = root.path + "/l00"
        #expect(discovery.passedOver.map(\.path) == (links.dropFirst() + ["real"]).map { root.path + "/" + $0 })
        #expect(discovery.passedOver.allSatisfy { $0.reason == .sameFolder(as: first) })
    }

    @Test func aLinkWhoseNameIsTheFoldersNameAndADotIsTheOneScanned() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("dot-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("a"), withIntermediateDirectories: true)
        try Data("f".utf8).write(to: root.appendingPathComponent("a/f.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("a.b").path, withDestinationPath: "a")
        // `a.b/` comes before `a/` (`.` before `/`), though `a.b` comes after `a`.
        let discovery = try InputDiscovery.discover(paths: [root.path], include: [], exclude: [], recursive: true)
        #expect(discovery.files.map(\.input.relativePath) == ["a.b/f.txt"])
        #expect(
            discovery.passedOver == [PassedOver(path: root.path + "/a", reason: .sameFolder(as: root.path + "/a.b"))])
    }

    @Test func namesAlikeInTheirFirst16BytesAreFoundInTheByteOrderOfRelativePaths() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("long-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let random = SeededRandom("namesAlikeInTheirFirst16BytesAreFoundInTheByteOrderOfRelativePaths")
        // Camera names share their first 16 bytes; `IMG_20240101_123` is 16 bytes, so its `/` is the 17th; `é`
        // is two bytes, across the 8th and 9th and across the 16th and 17th; names of exactly 16 and 17 bytes.
        let camera = (0..<24).map { String(format: "IMG_20240101_1234%02d.jpg", 59 - $0) }
        let paths =
            camera + [
                "IMG_20240101_123/x.txt", "IMG_20240101_123.txt", "IMG_20240101_123 a.txt", "IMG_20240101_1230",
                "abcdefgé", "abcdefgz", "abcdefg~", "abcdefghijklmnoé", "abcdefghijklmnoz", "abcdefghijklmno~",
                "abcdefghijklmnop", "abcdefghijklmnopq", "abcdefghijklmnop.txt", "abcdefghijklmnopé",
            ]
        for path in shuffled(paths, by: random) {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(path.utf8).write(to: url)
        }
        let discovery = try InputDiscovery.discover(paths: [root.path], include: [], exclude: [], recursive: true)
        #expect(discovery.files.map(\.input.relativePath) == paths.sorted(by: Self.byteOrder))
    }

    /// A random tree (files, folders, hidden entries, links to files, names alike in their first 16 bytes, bytes
    /// around `/` and multi-byte characters) is found in the global byte order of its relative paths.
    @Test func aRandomTreeIsFoundInTheByteOrderOfRelativePaths() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("random-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let random = SeededRandom("aRandomTreeIsFoundInTheByteOrderOfRelativePaths")
        let starts = ["", "IMG_20240101_12", "IMG_20240101_123", "abcdefg", "abcdefghijklmno", "."]
        let pieces = ["a", "b", "0", "-", " ", ".", "_", "é", "~", "Z", "b.", "ü"]
        func name() -> String {
            var name = starts[random.int(in: 0...starts.count - 1)]
            for _ in 0...random.int(in: 0...3) { name += pieces[random.int(in: 0...pieces.count - 1)] }
            return name
        }
        var folders = [""]
        var files: [String] = []
        var hidden = 0
        for _ in 0..<400 {
            let folder = folders[random.int(in: 0...folders.count - 1)]
            let path = folder.isEmpty ? name() : folder + "/" + name()
            let url = root.appendingPathComponent(path)
            guard !FileManager.default.fileExists(atPath: url.path) else { continue }
            let isHidden = (path as NSString).lastPathComponent.hasPrefix(".")
            switch random.int(in: 0...9) {
            case 0...1 where !isHidden && folder.split(separator: "/").count < 3:
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
                folders.append(path)
            case 2 where !files.isEmpty:
                let target = files[random.int(in: 0...files.count - 1)]
                try FileManager.default.createSymbolicLink(
                    atPath: url.path, withDestinationPath: root.appendingPathComponent(target).path)
                if isHidden { hidden += 1 } else { files.append(path) }
            default:
                try Data(path.utf8).write(to: url)
                if isHidden { hidden += 1 } else { files.append(path) }
            }
        }
        let discovery = try InputDiscovery.discover(paths: [root.path], include: [], exclude: [], recursive: true)
        #expect(discovery.files.map(\.input.relativePath) == files.sorted(by: Self.byteOrder))
        #expect(discovery.passedOver.count == hidden && discovery.passedOver.allSatisfy { $0.reason == .hidden })
    }

    /// Folders queued together are looked at together (listed, stat'ed and ordered several at once): a level of
    /// many folders, one of them large (its names stat'ed in several blocks beside the small ones), and a link
    /// that reaches a deeper folder first are found as one folder at a time would find them.
    @Test func aLevelOfManyFoldersIsFoundInTheByteOrderOfRelativePathsWithNoFolderLeftOpen() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("level-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let random = SeededRandom("aLevelOfManyFoldersIsFoundInTheByteOrderOfRelativePathsWithNoFolderLeftOpen")
        var files: [String] = []
        for folder in shuffled((0..<40).map { String(format: "d%02d", $0) }, by: random) {
            let count = folder == "d05" ? 600 : random.int(in: 0...3)
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
            for number in shuffled((0..<count).map { String(format: "f%03d.txt", $0) }, by: random) {
                try Data(number.utf8).write(to: root.appendingPathComponent(folder + "/" + number))
                files.append(folder + "/" + number)
            }
        }
        // d07/sub is reached at one level through the link e, at two levels as itself: it is scanned as e.
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("d07/sub"), withIntermediateDirectories: true)
        try Data("s".utf8).write(to: root.appendingPathComponent("d07/sub/s.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("e").path, withDestinationPath: "d07/sub")
        files.append("e/s.txt")
        let open = { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count }
        let before = try open()
        let discovery = try InputDiscovery.discover(paths: [root.path], include: [], exclude: [], recursive: true)
        #expect(try open() == before)
        #expect(discovery.files.map(\.input.relativePath) == files.sorted(by: Self.byteOrder))
        #expect(discovery.passedOver.map(\.path) == [root.path + "/d07/sub"])
        #expect(discovery.passedOver.map(\.reason) == [.sameFolder(as: root.path + "/e")])
        #expect(discovery.folders.count == 42)
    }

    /// A folder that cannot be listed in the middle of a block of siblings that can: its path is longer than
    /// PATH_MAX (so `opendir` fails with ENAMETOOLONG, even as root), theirs are not. It is passed over once at
    /// its place, and every other sibling's files come out under their own folder.
    @Test func anUnlistableFolderAmongItsSiblingsIsPassedOverAndTheirFilesStayTheirs() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("unlistable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { Self.removeDeepTree(root) }
        // A chain of long folder names brings the level's paths to 3,999 or 4,000 bytes (PATH_MAX is 4,096).
        var chain: [String] = []
        var length = root.path.utf8.count
        while length + 256 <= 4000 {
            chain.append(String(repeating: "d", count: 255))
            length += 256
        }
        if length < 3999 { chain.append(String(repeating: "e", count: 4000 - length - 1)) }
        let siblings = (0..<20).map { String(format: "s%02d", $0) }
        // Between s09 and s10 in name order: the 11th of the level's 21 folders, inside the first block of 16.
        let long = "s09" + String(repeating: "x", count: 247)
        var level = open(root.path, O_RDONLY | O_DIRECTORY)
        for name in chain {
            #expect(mkdirat(level, name, 0o755) == 0)
            let next = openat(level, name, O_RDONLY | O_DIRECTORY)
            close(level)
            level = next
        }
        defer { close(level) }
        var files: [String] = []
        for (number, folder) in (siblings + [long]).enumerated() {
            #expect(mkdirat(level, folder, 0o755) == 0)
            for file in 0..<(folder == long ? 2 : 1 + number * 7 % 4) {
                let made = openat(level, "\(folder)/f\(file).txt", O_CREAT | O_WRONLY, 0o644)
                #expect(made >= 0)
                close(made)
                if folder != long { files.append("\(folder)/f\(file).txt") }
            }
        }
        let discovery = try InputDiscovery.discover(paths: [root.path], include: [], exclude: [], recursive: true)
        let levelPath = ([root.path] + chain).joined(separator: "/")
        // Compared below the chain, so that a failure prints short paths.
        let chainPath = chain.joined(separator: "/") + "/"
        #expect(discovery.files.allSatisfy { $0.input.relativePath.hasPrefix(chainPath) })
        #expect(
            discovery.files.map { String($0.input.relativePath.dropFirst(chainPath.count)) }
                == files.sorted(by: Self.byteOrder))
        #expect(discovery.passedOver.map(\.path) == [levelPath + "/" + long])
        #expect(discovery.passedOver.map(\.reason) == [.unlistable(SystemCallError(code: ENAMETOOLONG).description)])
        #expect(discovery.folders.count == 1 + chain.count + 21)
    }

    @Test func aMissingInputIsAnErrorThatNamesIt() {
        let error = #expect(throws: InputError.self) {
            try InputDiscovery.discover(paths: ["/nonexistent/input"], include: [], exclude: [], recursive: true)
        }
        #expect(error?.message == "input /nonexistent/input does not exist")
    }

    /// Removes a tree whose paths may be longer than PATH_MAX (`rm` walks it relative to each folder).
    private static func removeDeepTree(_ root: URL) {
        let remove = Process()
        remove.executableURL = URL(fileURLWithPath: "/bin/rm")
        remove.arguments = ["-rf", root.path]
        try? remove.run()
        remove.waitUntilExit()
    }

    /// Whether `left` comes before `right` in the byte order of their UTF-8.
    private static func byteOrder(_ left: String, _ right: String) -> Bool {
        Array(left.utf8).lexicographicallyPrecedes(Array(right.utf8))
    }

    /// `items` in an order `random` picks (Fisher–Yates).
    private func shuffled(_ items: [String], by random: SeededRandom) -> [String] {
        var items = items
        for index in items.indices.dropLast().reversed() {
            items.swapAt(index, random.int(in: 0...index))
        }
        return items
    }
}
