import Crypto
package import Foundation
import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a file the way a segment store hands one over: under a temporary name beside its destination,
/// hashed as it is written, and renamed into place only once synced and matching its SHA-256. Whoever opens
/// the destination finds the whole file with the right bytes or no file, also on a filesystem that several
/// machines share and after a crash in the middle.
package enum VerifiedFile {
    /// Bytes read from a file per step of a copy.
    package static let chunkSize = 4 << 20

    /// Writes `destination` from the bytes `produce` passes, in order, to the `write` it is given.
    ///
    /// When `produce` throws, or the bytes' SHA-256 is not `sha256` (lowercase hex), the temporary file is
    /// removed and nothing appears at `destination` (an existing file there is left as it was); a mismatch
    /// throws ``SegmentStoreError/Code/hashMismatch``, naming `source`.
    package static func write(
        to destination: URL, sha256: String, source: String,
        _ produce: (_ write: (Data) async throws -> Void) async throws -> Void
    ) async throws {
        let folder = destination.deletingLastPathComponent().path
        let temporary = "\(folder)/.\(destination.lastPathComponent).\(UUID().uuidString.prefix(12)).partial"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("create", temporary) }
        do {
            var hasher = SHA256()
            try await produce { chunk in
                hasher.update(data: chunk)
                try await BlockingWork.run {
                    try chunk.withUnsafeBytes { try writeAll($0, to: descriptor, path: temporary) }
                }
            }
            let actual = HexDigest.text(hasher.finalize())
            guard actual == sha256 else {
                throw SegmentStoreError(
                    code: .hashMismatch,
                    message: "\(source) does not match its SHA-256: expected \(sha256), read \(actual)")
            }
            try await BlockingWork.run {
                guard fsync(descriptor) == 0 else { throw failure("sync", temporary) }
            }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        try await BlockingWork.run {
            guard rename(temporary, destination.path) == 0 else {
                let error = failure("move into place", temporary)
                unlink(temporary)
                throw error
            }
            // The rename itself must survive a crash, or the name could be gone again after a reboot.
            let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard directory >= 0 else { return }
            defer { close(directory) }
            guard fsync(directory) == 0 else { throw failure("sync the folder", folder) }
        }
    }

    /// Copies the file at `path` to `destination` through ``write(to:sha256:source:_:)``, reading it in
    /// ``chunkSize`` steps; a file that is not there throws `missing`.
    package static func copy(
        _ path: String, to destination: URL, sha256: String, missing: @autoclosure () -> SegmentStoreError
    ) async throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { throw missing() }
            throw failure("read", path)
        }
        defer { close(descriptor) }
        try await write(to: destination, sha256: sha256, source: path) { write in
            var offset: Int64 = 0
            while true {
                try Task.checkCancellation()
                let start = offset
                let chunk = try await BlockingWork.run { try read(descriptor, at: start, path: path) }
                if chunk.isEmpty { return }
                try await write(chunk)
                offset += Int64(chunk.count)
            }
        }
    }

    /// Up to ``chunkSize`` bytes of the file from `offset`; empty at its end.
    private static func read(_ descriptor: Int32, at offset: Int64, path: String) throws(SegmentStoreError) -> Data {
        var chunk = Data(count: chunkSize)
        let count = chunk.withUnsafeMutableBytes { buffer in
            var count = -1
            repeat {
                count = pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset))
            } while count < 0 && errno == EINTR
            return count
        }
        guard count >= 0 else { throw failure("read", path) }
        chunk.count = count
        return chunk
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, path: String)
        throws(SegmentStoreError)
    {
        var done = 0
        while done < bytes.count {
            let count = Glibc.write(descriptor, bytes.baseAddress?.advanced(by: done), bytes.count - done)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw failure("write", path) }
            done += count
        }
    }

    /// The error of a system call on `path` that failed just now, with what `errno` says.
    package static func failure(_ doing: String, _ path: String) -> SegmentStoreError {
        let reason = String(cString: strerror(errno))
        let full = errno == ENOSPC || errno == EDQUOT
        return SegmentStoreError(
            code: .storage, message: "cannot \(doing) \(path): \(reason)",
            disposition: full ? .retryable(after: .seconds(30)) : .fatal)
    }
}
