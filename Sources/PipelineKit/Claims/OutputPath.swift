import Foundation
public import StageKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one form of a path that output claims are keyed by, so that two spellings of one file are one claim:
/// absolute, standardized (no `.`, `..` or repeated `/`), with symbolic links in its folder resolved (as far as the
/// folder exists). A relative path is taken from the working folder of the command, as the stage that writes it
/// takes it (`run`, `watch` and each worker; `submit` refuses relative destinations, since each worker has its own).
public enum OutputPath {
    /// The files a stage of type `descriptor` writes with `options` at paths the workflow chose, in normal form, as
    /// the stage writes them: a relative path is taken from the command's working folder.
    public static func destinations(of descriptor: StageDescriptor, options: JSONValue) -> Set<String> {
        let folder = FileManager.default.currentDirectoryPath
        return Set(descriptor.destinations(with: options).map { normal($0, relativeTo: folder) })
    }

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
