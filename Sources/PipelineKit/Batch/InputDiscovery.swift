import Foundation
public import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// An input path that cannot be used at all (it does not exist, a folder cannot be listed).
public struct InputError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    public var description: String { message }
}

/// A file found for a run, with the stat data that decides whether its cached fingerprint still stands.
public struct DiscoveredFile: Sendable, Hashable {
    /// The file as `${input.*}` sees it.
    public var input: InputItem
    /// Its stat data.
    public var stamp: FileStamp
}

/// The files of a run, and those the selection left out with the reason.
public struct Discovery: Sendable {
    /// The files to plan, sorted by relative path; a file given twice appears once.
    public var files: [DiscoveredFile]
    /// Files and folders left out.
    public var passedOver: [PassedOver]
    /// The folders that were scanned (what `pipeline watch` watches).
    public var folders: [String] = []
}

/// Finds the input files of a run.
public enum InputDiscovery {
    /// The files selected by `paths` (files or folders), filtered by the patterns. Hidden names, files the
    /// patterns leave out and anything that is not a regular file are listed as passed over, with the reason.
    /// A file's metadata comes from its sidecar JSON (`clip.mp4.json` or `clip.json` beside it), over the
    /// fields `manifest` gives for its relative path or name; sidecars themselves are passed over.
    public static func discover(
        paths: [String], include: [String], exclude: [String], recursive: Bool, skipping skipped: [String] = [],
        manifest: InputManifest = InputManifest()
    ) throws(InputError) -> Discovery {
        var discovery = Discovery(files: [], passedOver: [])
        let skippedPaths = Set(skipped.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        for path in paths {
            let url = URL(fileURLWithPath: path).standardizedFileURL
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
                throw InputError(message: "input \(path) does not exist")
            }
            if isDirectory.boolValue {
                try scan(
                    folder: url, include: include, exclude: exclude, recursive: recursive, skipping: skippedPaths,
                    manifest: manifest, into: &discovery)
            } else {
                let folder = url.deletingLastPathComponent().path
                let names = Set((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
                var info = stat()
                guard stat(url.path, &info) == 0 else {
                    throw InputError(message: "cannot read \(path): \(String(cString: strerror(errno)))")
                }
                switch file(
                    at: url.path, name: url.lastPathComponent, folder: folder, relativePath: url.lastPathComponent,
                    info: info, siblings: names, manifest: manifest)
                {
                case .success(let found): discovery.files.append(found)
                case .failure(let reason): throw InputError(message: "input \(path): \(reason.message)")
                }
            }
        }
        // One input is found in order already (``scan``); several are put in the byte order of relative paths
        // (then paths), as the ledger sorts them: positions are sorted, not the files, which would be copied at
        // every step.
        guard paths.count > 1 else { return discovery }
        var seen = Set<String>()
        discovery.files.removeAll { !seen.insert($0.input.path).inserted }
        let files = discovery.files
        let relativePaths = files.map(\.input.relativePath)
        let order = files.indices.sorted { a, b in
            let order = relativePaths[a].byteOrder(relativePaths[b])
            return order == 0 ? files[a].input.path.precedesInByteOrder(files[b].input.path) : order < 0
        }
        discovery.files = order.map { files[$0] }
        return discovery
    }

    /// Scans `folder` (and, when `recursive`, its folders, a level at a time): each folder is listed once, its
    /// entries are stat'ed relative to it by several threads (256 names each; ``lookAt(_:entry:)`` takes up to
    /// 16 queued folders at a time) and taken in name order, where a folder's name counts as the name followed
    /// by `/` (so `a.b` comes before `a`, as `.` before `/`). A folder reached again (through a link) is passed
    /// over: a folder is scanned at its shallowest path, and of paths equally deep, at the first in the order
    /// files are planned (its relative path followed by `/`). The scanned folders' files are put together depth
    /// first, so the files are never sorted as a whole. Entries left out are added as they are met: a level at a
    /// time, each folder's in name order.
    private static func scan(
        folder: URL, include: [String], exclude: [String], recursive: Bool, skipping skipped: Set<String>,
        manifest: InputManifest, into discovery: inout Discovery
    ) throws(InputError) {
        let root = folder.path
        var rootInfo = stat()
        // Folders entered, by where they are on disk: one reached again (through a link) is not scanned twice.
        var entered: [FolderIdentity: String] = stat(root, &rootInfo) == 0 ? [FolderIdentity(rootInfo): root] : [:]
        // The folders to scan, in the order they are scanned (each level after the one before), and the files.
        var folders = [ScannedFolder(path: root, prefix: "")]
        var files: [DiscoveredFile] = []
        var current = 0
        while current < folders.count {
            // Up to 16 queued folders are listed, stat'ed and ordered together (``lookAt``); then taken in order.
            let queued = folders[current..<min(current + foldersAtOnce, folders.count)]
            let looked = lookAt(queued.map { (path: $0.path, prefix: $0.prefix) }) { name, found, listing in
                entry(
                    name: name, stat: found, in: listing, include: include, exclude: exclude,
                    recursive: recursive, skipping: skipped, manifest: manifest)
            }
            for folder in looked {
                let directory = folders[current].path
                discovery.folders.append(directory)
                let found: (entries: [Entry], order: [Int])
                switch folder {
                case .success(let looked): found = looked
                case .failure(let error):
                    guard directory == root else {
                        discovery.passedOver.append(PassedOver(path: directory, reason: .unlistable("\(error)")))
                        current += 1
                        continue
                    }
                    throw InputError(message: "cannot list \(directory): \(error)")
                }
                let firstFile = files.count
                for index in found.order {
                    switch found.entries[index] {
                    case .file(let file): files.append(file)
                    case .passedOver(let passed): discovery.passedOver.append(passed)
                    case .folder(let path, let relative, let identity):
                        if let first = entered[identity] {
                            discovery.passedOver.append(PassedOver(path: path, reason: .sameFolder(as: first)))
                        } else {
                            entered[identity] = path
                            folders[current].folders.append((after: files.count - firstFile, folder: folders.count))
                            folders.append(ScannedFolder(path: path, prefix: relative))
                        }
                    case .ignored: break
                    }
                }
                folders[current].files = firstFile..<files.count
                current += 1
            }
        }
        // Assigned when nothing came before: appending would copy every file into a second array.
        let found = depthFirst(folders, files: files)
        if discovery.files.isEmpty { discovery.files = found } else { discovery.files += found }
    }

    /// How many queued folders are looked at at once.
    private static let foldersAtOnce = 16

    /// Each folder (path and prefix) listed, its entries made by `entry` and put in name order
    /// (``inNameOrder(_:names:)``), or the reason it cannot be listed. The three steps run one after another:
    /// all the folders are listed, then their entries stat'ed, then ordered; each step is spread over the cores
    /// (folders listed and ordered several at once, the stat blocks of all the folders shared by the threads).
    private static func lookAt(
        _ queued: [(path: String, prefix: String)],
        entry: @Sendable (String, Result<stat, SystemCallError>, FolderListing) -> Entry
    ) -> [Result<(entries: [Entry], order: [Int]), SystemCallError>] {
        let listed = inParallel(Array(queued.indices)) { number in
            Result { () throws(SystemCallError) in
                try FolderListing(path: queued[number].path, prefix: queued[number].prefix)
            }
        }
        let open = listed.compactMap { try? $0.get() }
        let entries = FolderListing.entries(of: open) { listing, name, found in entry(name, found, listing) }
        for listing in open { listing.close() }
        let orders = inParallel(Array(open.indices)) { inNameOrder(entries[$0], names: open[$0].names) }
        var opened = 0
        return listed.map { listing in
            listing.map { _ in
                defer { opened += 1 }
                return (entries: entries[opened], order: orders[opened])
            }
        }
    }

    /// `transform` of each element, several at once, each by one thread; in order.
    private static func inParallel<T: Sendable, R: Sendable>(_ elements: [T], _ transform: @Sendable (T) -> R)
        -> [R]
    {
        [R](unsafeUninitializedCapacity: elements.count) { buffer, initialized in
            // Each slot is written once, by the one thread that takes its element.
            nonisolated(unsafe) let slots = buffer
            DispatchQueue.concurrentPerform(iterations: elements.count) { index in
                slots.initializeElement(at: index, to: transform(elements[index]))
            }
            initialized = elements.count
        }
    }

    /// A folder to scan, and once scanned what it holds: its files (found together, in order) and the folders
    /// scanned from it.
    private struct ScannedFolder {
        var path: String
        var prefix: String
        /// Its files' places among the files found.
        var files: Range<Int> = 0..<0
        /// The folders scanned from it (their places among the folders), each with how many of its files come
        /// before it.
        var folders: [(after: Int, folder: Int)] = []
    }

    /// The positions of a folder's entries in the byte order of the relative paths they lead to: by name, a
    /// folder's name followed by a `/` (`a.txt` comes before the files of folder `a`, as `.` before `/`). Names
    /// are compared by their first 16 bytes, as two numbers, and in full only when those are the same.
    private static func inNameOrder(_ entries: [Entry], names: [String]) -> [Int] {
        let keys = names.indices.map { index in
            if case .folder = entries[index] { names[index] + "/" } else { names[index] }
        }
        let starts = keys.map(NameStart.init)
        return keys.indices.sorted { a, b in
            starts[a] == starts[b] ? keys[a].precedesInByteOrder(keys[b]) : starts[a] < starts[b]
        }
    }

    /// The files of the scanned folders, depth first from the input folder, each folder's files and folders in
    /// order: the byte order of their relative paths.
    private static func depthFirst(_ folders: [ScannedFolder], files: [DiscoveredFile]) -> [DiscoveredFile] {
        var order: [Int] = []
        order.reserveCapacity(files.count)
        // The folders being walked, each with the next folder scanned from it and the next of its files.
        var walk: [(folder: Int, child: Int, file: Int)] = [(0, 0, folders[0].files.lowerBound)]
        while let next = walk.popLast() {
            let (own, children) = (folders[next.folder].files, folders[next.folder].folders)
            let end = next.child < children.count ? own.lowerBound + children[next.child].after : own.upperBound
            order.append(contentsOf: next.file..<end)
            guard next.child < children.count else { continue }
            walk.append((next.folder, next.child + 1, end))
            let child = children[next.child].folder
            walk.append((child, 0, folders[child].files.lowerBound))
        }
        // Folders holding only files, or only folders, are often found in this order already: no copy then.
        return order.elementsEqual(files.indices) ? files : order.map { files[$0] }
    }

    /// What one entry of a folder is to a run.
    private enum Entry {
        case file(DiscoveredFile)
        case passedOver(PassedOver)
        case folder(path: String, relativePath: String, identity: FolderIdentity)
        case ignored
    }

    /// The entry `name` of a listed folder, with its stat data (`found`; the error of a failed `fstatat`).
    private static func entry(
        name: String, stat found: Result<stat, SystemCallError>, in listing: FolderListing, include: [String],
        exclude: [String], recursive: Bool, skipping skipped: Set<String>, manifest: InputManifest
    ) -> Entry {
        let path = listing.path == "/" ? "/" + name : listing.path + "/" + name
        guard !skipped.contains(path) else { return .ignored }
        if name.hasPrefix(".") { return .passedOver(PassedOver(path: path, reason: .hidden)) }
        let relative = listing.prefix.isEmpty ? name : listing.prefix + "/" + name
        let info: stat
        switch found {
        case .success(let data): info = data
        case .failure(let error):
            let reason: SkipReason = error.code == ENOENT ? .brokenLink : .unreadable("\(error)")
            return .passedOver(PassedOver(path: path, reason: reason))
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            guard recursive else {
                return .passedOver(PassedOver(path: path, reason: .folder))
            }
            return .folder(path: path, relativePath: relative, identity: FolderIdentity(info))
        }
        if let owner = sidecarOwner(of: name, among: listing.siblings, byStem: listing.byStem) {
            return .passedOver(PassedOver(path: path, reason: .sidecar(of: owner)))
        }
        if !include.isEmpty, !include.contains(where: { matches($0, name: name, relativePath: relative) }) {
            return .passedOver(PassedOver(path: path, reason: .notIncluded(by: include)))
        }
        if let pattern = exclude.first(where: { matches($0, name: name, relativePath: relative) }) {
            return .passedOver(PassedOver(path: path, reason: .excluded(by: pattern)))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            return .passedOver(PassedOver(path: path, reason: .notRegularFile))
        }
        switch file(
            at: path, name: name, folder: listing.path, relativePath: relative, info: info,
            siblings: listing.siblings, manifest: manifest)
        {
        case .success(let found): return .file(found)
        case .failure(let error): return .passedOver(PassedOver(path: path, reason: .unreadableMetadata(error.message)))
        }
    }

    /// A pattern with a `/` matches the relative path, otherwise the file name; case-insensitive.
    private static func matches(_ pattern: String, name: String, relativePath: String) -> Bool {
        let subject = pattern.contains("/") ? relativePath : name
        return fnmatch(pattern.lowercased(), subject.lowercased(), 0) == 0
    }

    /// The file a `.json` name is the sidecar of (`clip.mp4.json` → `clip.mp4`, `clip.json` → `clip.mp4`).
    private static func sidecarOwner(of name: String, among siblings: Set<String>, byStem: [Substring: String])
        -> String?
    {
        guard name.hasSuffix(".json") else { return nil }
        let base = String(name.dropLast(5))
        return siblings.contains(base) ? base : byStem[base[...]]
    }

    /// The sidecar of a file among its siblings, if it has one.
    private static func sidecar(of name: String, among siblings: Set<String>) -> String? {
        guard !siblings.isEmpty else { return nil }
        if siblings.contains(name + ".json") { return name + ".json" }
        let json = String(stem(of: name)) + ".json"
        return json != name && siblings.contains(json) ? json : nil
    }

    /// A file name without its extension (`clip.mp4` → `clip`; `.hidden` and `name` stay as they are).
    static func stem(of name: String) -> Substring {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name[...] }
        return name[..<dot]
    }

    /// A sidecar's fields: a JSON object.
    private static func readSidecar(_ url: URL) -> Result<[String: JSONValue], InputError> {
        do {
            guard case .object(let fields) = try JSONValue(parsing: Data(contentsOf: url)) else {
                return .failure(InputError(message: "its sidecar \(url.path) is not a JSON object"))
            }
            return .success(fields)
        } catch {
            return .failure(InputError(message: "its sidecar \(url.path) is not valid JSON: \(error)"))
        }
    }

    /// A regular file found at `path` (inside `folder`, with the stat data `info`), with its metadata.
    private static func file(
        at path: String, name: String, folder: String, relativePath: String, info: stat, siblings: Set<String>,
        manifest: InputManifest
    ) -> Result<DiscoveredFile, InputError> {
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            return .failure(InputError(message: "not a regular file"))
        }
        let nanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        var meta = manifest.fields(for: relativePath, name: name)
        if let sidecar = sidecar(of: name, among: siblings) {
            switch readSidecar(URL(fileURLWithPath: folder).appendingPathComponent(sidecar)) {
            case .success(let fields): meta.merge(fields) { _, new in new }
            case .failure(let error): return .failure(error)
            }
        }
        let input = InputItem(
            path: path, relativePath: relativePath, size: Int64(info.st_size),
            modified: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9, meta: meta)
        let stamp = FileStamp(
            path: path, size: input.size, modifiedNanoseconds: nanoseconds, inode: Int64(info.st_ino),
            device: Int64(info.st_dev))
        return .success(DiscoveredFile(input: input, stamp: stamp))
    }
}

/// The first 16 bytes of a name as two numbers (zeros after a shorter name), which compare as the bytes do:
/// names differ there more often than not. A name holds no zero byte.
private struct NameStart: Comparable {
    var high: UInt64 = 0
    var low: UInt64 = 0

    init(_ name: String) {
        for (index, byte) in name.utf8.prefix(16).enumerated() {
            if index < 8 {
                high |= UInt64(byte) << (56 - 8 * index)
            } else {
                low |= UInt64(byte) << (56 - 8 * (index - 8))
            }
        }
    }

    static func < (left: NameStart, right: NameStart) -> Bool {
        (left.high, left.low) < (right.high, right.low)
    }
}
