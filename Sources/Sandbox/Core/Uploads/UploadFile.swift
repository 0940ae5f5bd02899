import NIOCore
import NIOPosix
import StageKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open upload file whose blocking calls (`pwrite`, `pread`, `ftruncate`) run on NIO's
/// blocking-I/O thread pool, never on an event loop or the cooperative pool.
///
/// (`NonBlockingFileIO` would do the same but is deprecated; this keeps to the three calls the
/// sandbox needs.)
struct UploadFile: Sendable {
    private let descriptor: CInt
    private let pool: NIOThreadPool

    /// Opens `path` for the duration of `body`, creating it when `forWriting`.
    static func with<Result: Sendable>(
        path: String,
        forWriting: Bool,
        pool: NIOThreadPool = .singleton,
        _ body: (UploadFile) async throws -> Result
    ) async throws -> Result {
        let descriptor = try await pool.runIfActive {
            let flags = forWriting ? (O_WRONLY | O_CREAT | O_CLOEXEC) : (O_RDONLY | O_CLOEXEC)
            let descriptor = open(path, flags, 0o644)
            guard descriptor >= 0 else { throw UploadFileError(operation: "open", path: path, code: errno) }
            return descriptor
        }
        let file = UploadFile(descriptor: descriptor, pool: pool)
        defer { close(descriptor) }
        return try await body(file)
    }

    /// Writes all of `buffer` at `offset`.
    func write(_ buffer: ByteBuffer, at offset: Int64) async throws {
        let descriptor = self.descriptor
        try await self.pool.runIfActive {
            try buffer.withUnsafeReadableBytes { bytes in
                var done = 0
                while done < bytes.count {
                    guard let base = bytes.baseAddress else { return }
                    let result = pwrite(descriptor, base + done, bytes.count - done, off_t(offset) + off_t(done))
                    if result < 0 {
                        if errno == EINTR { continue }
                        throw UploadFileError(operation: "pwrite", path: nil, code: errno)
                    }
                    done += result
                }
            }
        }
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(count: Int, at offset: Int64) async throws -> ByteBuffer {
        let descriptor = self.descriptor
        return try await self.pool.runIfActive {
            var buffer = ByteBuffer()
            try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { bytes in
                var done = 0
                while done < count {
                    guard let base = bytes.baseAddress else { break }
                    let result = pread(descriptor, base + done, count - done, off_t(offset) + off_t(done))
                    if result < 0 {
                        if errno == EINTR { continue }
                        throw UploadFileError(operation: "pread", path: nil, code: errno)
                    }
                    if result == 0 { break }
                    done += result
                }
                return done
            }
            return buffer
        }
    }

    /// Cuts the file to `length` bytes.
    func truncate(to length: Int64) async throws {
        let descriptor = self.descriptor
        try await self.pool.runIfActive {
            guard ftruncate(descriptor, off_t(length)) == 0 else {
                throw UploadFileError(operation: "ftruncate", path: nil, code: errno)
            }
        }
    }
}

/// A failed system call on an upload file.
struct UploadFileError: Error, CustomStringConvertible {
    var operation: String
    var path: String?
    var code: CInt

    var description: String {
        "\(self.operation)\(self.path.map { " \($0)" } ?? ""): \(String(cString: strerror(self.code)))"
    }
}
