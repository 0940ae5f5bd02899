import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Crash-safe file writes: a reader sees the old file or the new one, never a mix.
enum AtomicFile {
    /// Writes through a temporary file in the same folder: write, fsync, rename, fsync the folder.
    static func write(_ data: Data, to url: URL) throws(SandboxError) {
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
    private static func syncFolder(_ folder: URL) throws(SandboxError) {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open", folder) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("cannot sync", folder) }
    }

    /// The error of a system call on `url` that just failed, from `errno`.
    private static func failure(_ action: String, _ url: URL) -> SandboxError {
        let reason = errno == ENOSPC ? "the disk is full" : String(cString: strerror(errno))
        return SandboxError(code: .dataFolder, message: "\(action) \(url.path): \(reason)")
    }
}
