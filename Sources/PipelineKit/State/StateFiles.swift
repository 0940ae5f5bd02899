package import Foundation

#if canImport(Glibc)
    import Glibc
    import StageKit
#endif

/// A problem with the state folder: it cannot be written, is in use, or holds a damaged file.
public struct StateError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem, so callers can choose an exit code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: String { case io, busy, corrupt, incompatible, leaseLost = "lease lost" }
        private let kind: Kind
        /// Reading or writing failed (permissions, disk full).
        public static let io = Code(kind: .io)
        /// Another process holds the state folder.
        public static let busy = Code(kind: .busy)
        /// A state file is damaged (truncated or edited by hand).
        public static let corrupt = Code(kind: .corrupt)
        /// A state file was written by a newer format.
        public static let incompatible = Code(kind: .incompatible)
        /// A worker's lease on an item was taken over by another worker: this worker may not write for it.
        public static let leaseLost = Code(kind: .leaseLost)
        public var description: String { kind.rawValue }
    }

    /// The kind of problem.
    public var code: Code
    /// What happened and what to do, for people.
    public var message: String
    /// The file or folder concerned.
    public var path: String

    public var description: String { message }

    /// Creates an error.
    public init(code: Code, message: String, path: String) {
        self.code = code
        self.message = message
        self.path = path
    }
}

/// Crash-safe file writes: a reader sees the old file or the new one, never a mix.
package enum AtomicFile {
    /// Writes through a temporary file in the same folder: write, fsync, rename, fsync the folder.
    package static func write(_ data: Data, to url: URL) throws(StateError) {
        let folder = url.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(
            ".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("cannot create", temporary) }
        var ok = data.withUnsafeBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
        if ok { ok = fsync(descriptor) == 0 }
        let savedErrno = errno
        close(descriptor)
        guard ok, rename(temporary.path, url.path) == 0 else {
            errno = savedErrno
            let error = failure("cannot write", url)
            unlink(temporary.path)
            throw error
        }
        try syncFolder(folder)
    }

    /// Makes a folder's entries (a rename, a new file) durable.
    package static func syncFolder(_ folder: URL) throws(StateError) {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open", folder) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("cannot sync", folder) }
    }

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

    package static func failure(_ action: String, _ url: URL) -> StateError {
        let reason = errno == ENOSPC ? "the disk is full" : String(cString: strerror(errno))
        return StateError(code: .io, message: "\(action) \(url.path): \(reason)", path: url.path)
    }
}
