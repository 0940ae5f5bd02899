import Foundation
import StageKit
import StageRuntime

/// The files a stage's outputs name, and whether they are still what the stage made.
///
/// Every string among the outputs that is an absolute path to a regular file counts. Each is recorded with its
/// sampled content fingerprint (size and a hash of at most 4 MiB, ``ContentFingerprint``), so checking them
/// before a checkpoint is reused costs a few reads, whatever their size.
enum OutputFiles {
    /// The files among `outputs`, by path, with their fingerprints; nil when they name none.
    static func fingerprints(in outputs: JSONValue) -> [String: String]? {
        var files: [String: String] = [:]
        outputs.forEachString { text in
            guard text.hasPrefix("/"), files[text] == nil, let fingerprint = fingerprint(of: text) else { return }
            files[text] = fingerprint
        }
        return files.isEmpty ? nil : files
    }

    /// The first recorded file that is missing or changed, with what happened to it; nil when all stand.
    static func firstChange(in files: [String: String]) -> String? {
        for (path, recorded) in files.sorted(by: { $0.key < $1.key }) {
            guard let fingerprint = fingerprint(of: path) else { return "its output \(path) is missing" }
            if fingerprint != recorded { return "its output \(path) changed since it ran" }
        }
        return nil
    }

    /// The fingerprint of a regular file, nil when there is none at `path`.
    private static func fingerprint(of path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return try? ContentFingerprint.compute(path: path, size: Int64(info.st_size), method: .sampled)
    }
}
