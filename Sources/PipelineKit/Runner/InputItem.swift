import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
    public import StageKit
#endif

extension InputItem {
    /// The folder name of the item's state: readable, and unique for each relative path.
    package var stateKey: String {
        let digest = SHA256.hash(data: Data(relativePath.utf8)).prefix(4).map { String(format: "%02x", $0) }.joined()
        return String(StateNames.sanitize(relativePath.replacingOccurrences(of: "/", with: "__")).prefix(80)) + "-"
            + digest
    }
}

/// An input path or pattern that selects nothing usable.
public struct InputError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    public var description: String { message }
}

/// Finds the input files of a run.
public enum InputDiscovery {
    /// The files selected by `paths` (files or folders), filtered by the patterns, sorted by relative path.
    public static func items(
        paths: [String], include: [String], exclude: [String], recursive: Bool, skipping skipped: [String] = []
    ) throws(InputError) -> [InputItem] {
        var items: [InputItem] = []
        let skippedPaths = Set(skipped.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        for path in paths {
            let url = URL(fileURLWithPath: path).standardizedFileURL
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
                throw InputError(message: "input \(path) does not exist")
            }
            if isDirectory.boolValue {
                items += try scan(
                    folder: url, include: include, exclude: exclude, recursive: recursive, skipping: skippedPaths)
            } else {
                items.append(try item(at: url, relativePath: url.lastPathComponent))
            }
        }
        var seen: [String: String] = [:]
        for item in items {
            if let other = seen[item.relativePath] {
                throw InputError(
                    message:
                        "inputs \(other) and \(item.path) have the same relative path \(item.relativePath); give them from one folder"
                )
            }
            seen[item.relativePath] = item.path
        }
        return items.sorted { $0.relativePath < $1.relativePath }
    }

    private static func scan(
        folder: URL, include: [String], exclude: [String], recursive: Bool, skipping skipped: Set<String>
    ) throws(InputError) -> [InputItem] {
        let manager = FileManager.default
        var found: [InputItem] = []
        var pending: [(URL, String)] = [(folder, "")]
        while let (directory, prefix) = pending.popLast() {
            let names: [String]
            do {
                names = try manager.contentsOfDirectory(atPath: directory.path)
            } catch {
                throw InputError(message: "cannot list \(directory.path): \(error.localizedDescription)")
            }
            for name in names where !name.hasPrefix(".") {
                let url = directory.appendingPathComponent(name)
                guard !skipped.contains(url.standardizedFileURL.path) else { continue }
                let relative = prefix.isEmpty ? name : prefix + "/" + name
                var isDirectory: ObjCBool = false
                guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory) else { continue }
                if isDirectory.boolValue {
                    if recursive { pending.append((url, relative)) }
                    continue
                }
                let included = include.isEmpty || include.contains { matches($0, name: name, relativePath: relative) }
                let excluded = exclude.contains { matches($0, name: name, relativePath: relative) }
                if included && !excluded {
                    found.append(try item(at: url, relativePath: relative))
                }
            }
        }
        return found
    }

    /// A pattern with a `/` matches the relative path, otherwise the file name; case-insensitive.
    private static func matches(_ pattern: String, name: String, relativePath: String) -> Bool {
        let subject = pattern.contains("/") ? relativePath : name
        return fnmatch(pattern.lowercased(), subject.lowercased(), 0) == 0
    }

    private static func item(at url: URL, relativePath: String) throws(InputError) -> InputItem {
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            throw InputError(message: "cannot read \(url.path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw InputError(message: "input \(url.path) is not a regular file")
        }
        let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        return InputItem(path: url.path, relativePath: relativePath, size: Int64(info.st_size), modified: modified)
    }
}
