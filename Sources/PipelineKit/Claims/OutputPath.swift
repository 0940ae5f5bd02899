import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one form of a path that output claims are keyed by, so that two spellings of one file are one claim:
/// absolute, standardized (no `.`, `..` or repeated `/`), with symbolic links in its folder resolved (as far as the
/// folder exists). A relative path is taken from the workflow file's folder, wherever the command that reads it
/// runs: `submit` and every worker agree on it.
public enum OutputPath {
    /// The normal form of `path`, a relative one taken from `folder` (absolute).
    public static func normal(_ path: String, relativeTo folder: String) -> String {
        let absolute = path.hasPrefix("/") ? path : folder + "/" + path
        let standardized = URL(fileURLWithPath: absolute).standardizedFileURL.path
        guard standardized != "/" else { return standardized }
        let name = (standardized as NSString).lastPathComponent
        let parent = resolved((standardized as NSString).deletingLastPathComponent)
        return parent == "/" ? "/" + name : parent + "/" + name
    }

    /// `folder` with its symbolic links resolved: those of its longest part that exists (the rest is not there to
    /// be a link yet).
    static func resolved(_ folder: String) -> String {
        var head = folder
        var rest: [String] = []
        while head != "/", !head.isEmpty {
            if let real = realPath(head) {
                return ([real == "/" ? "" : real] + rest.reversed()).joined(separator: "/")
            }
            rest.append((head as NSString).lastPathComponent)
            head = (head as NSString).deletingLastPathComponent
        }
        return rest.isEmpty ? "/" : "/" + rest.reversed().joined(separator: "/")
    }

    /// The real path of an existing `path`, nil when it does not exist (or cannot be read).
    private static func realPath(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }
}

extension Workflow {
    /// The folder of the workflow file: relative output paths are claimed from there (``OutputPath``).
    public var folder: String {
        URL(fileURLWithPath: file).standardizedFileURL.deletingLastPathComponent().path
    }
}
