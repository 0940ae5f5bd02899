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
}

/// Finds the input files of a run.
public enum InputDiscovery {
    /// The files selected by `paths` (files or folders), filtered by the patterns. Hidden names, files the
    /// patterns leave out and anything that is not a regular file are listed as passed over, with the reason.
    public static func discover(
        paths: [String], include: [String], exclude: [String], recursive: Bool, skipping skipped: [String] = []
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
                    into: &discovery)
            } else {
                switch file(at: url, relativePath: url.lastPathComponent) {
                case .success(let found): discovery.files.append(found)
                case .failure(let reason): throw InputError(message: "input \(path): \(reason.message)")
                }
            }
        }
        var seen = Set<String>()
        discovery.files = discovery.files.filter { seen.insert($0.input.path).inserted }.sorted {
            ($0.input.relativePath, $0.input.path) < ($1.input.relativePath, $1.input.path)
        }
        return discovery
    }

    private static func scan(
        folder: URL, include: [String], exclude: [String], recursive: Bool, skipping skipped: Set<String>,
        into discovery: inout Discovery
    ) throws(InputError) {
        let manager = FileManager.default
        var pending: [(URL, String)] = [(folder, "")]
        while let (directory, prefix) = pending.popLast() {
            let names: [String]
            do {
                names = try manager.contentsOfDirectory(atPath: directory.path)
            } catch {
                guard directory == folder else {
                    discovery.passedOver.append(
                        PassedOver(path: directory.path, reason: "cannot list: \(error.localizedDescription)"))
                    continue
                }
                throw InputError(message: "cannot list \(directory.path): \(error.localizedDescription)")
            }
            for name in names {
                let url = directory.appendingPathComponent(name)
                guard !skipped.contains(url.standardizedFileURL.path) else { continue }
                if name.hasPrefix(".") {
                    discovery.passedOver.append(PassedOver(path: url.path, reason: "hidden"))
                    continue
                }
                let relative = prefix.isEmpty ? name : prefix + "/" + name
                var isDirectory: ObjCBool = false
                guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
                    discovery.passedOver.append(PassedOver(path: url.path, reason: "a broken link"))
                    continue
                }
                if isDirectory.boolValue {
                    if recursive {
                        pending.append((url, relative))
                    } else {
                        discovery.passedOver.append(
                            PassedOver(path: url.path, reason: "a folder (set inputs.recursive to go into folders)"))
                    }
                    continue
                }
                if !include.isEmpty, !include.contains(where: { matches($0, name: name, relativePath: relative) }) {
                    discovery.passedOver.append(
                        PassedOver(path: url.path, reason: "not included by \(include.joined(separator: ", "))"))
                    continue
                }
                if let pattern = exclude.first(where: { matches($0, name: name, relativePath: relative) }) {
                    discovery.passedOver.append(PassedOver(path: url.path, reason: "excluded by \(pattern)"))
                    continue
                }
                switch file(at: url, relativePath: relative) {
                case .success(let found): discovery.files.append(found)
                case .failure(let reason):
                    discovery.passedOver.append(PassedOver(path: url.path, reason: reason.message))
                }
            }
        }
    }

    /// A pattern with a `/` matches the relative path, otherwise the file name; case-insensitive.
    private static func matches(_ pattern: String, name: String, relativePath: String) -> Bool {
        let subject = pattern.contains("/") ? relativePath : name
        return fnmatch(pattern.lowercased(), subject.lowercased(), 0) == 0
    }

    private static func file(at url: URL, relativePath: String) -> Result<DiscoveredFile, InputError> {
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            return .failure(InputError(message: "cannot read it: \(String(cString: strerror(errno)))"))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            return .failure(InputError(message: "not a regular file"))
        }
        let nanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        let input = InputItem(
            path: url.path, relativePath: relativePath, size: Int64(info.st_size),
            modified: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        let stamp = FileStamp(
            path: url.path, size: input.size, modifiedNanoseconds: nanoseconds, inode: Int64(info.st_ino),
            device: Int64(info.st_dev))
        return .success(DiscoveredFile(input: input, stamp: stamp))
    }
}
