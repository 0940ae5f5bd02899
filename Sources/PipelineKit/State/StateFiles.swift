package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Creating the state folder, and the errors of its system calls in the words people read.
package enum StateFiles {
    /// Creates a folder and its parents.
    package static func createFolder(_ folder: URL) throws(StateError) {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw StateError(
                code: .io, message: "cannot create the state folder \(folder.path): \(error.localizedDescription)",
                path: folder.path)
        }
    }

    /// The error of a system call on `url` that just failed, from `errno`.
    package static func failure(_ action: String, _ url: URL) -> StateError {
        let reason = errno == ENOSPC ? "the disk is full" : String(cString: strerror(errno))
        return StateError(code: .io, message: "\(action) \(url.path): \(reason)", path: url.path)
    }
}
