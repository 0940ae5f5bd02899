import Hummingbird
import NIOCore
import StageKit

/// Streams a request body into an upload file as it arrives, so memory stays flat whatever the
/// file size and a body cut off mid-way keeps every byte that arrived.
///
/// Incoming buffers (tens of KiB each) are gathered into 1 MiB writes on NIO's blocking-I/O
/// thread pool; after each write the new end offset is reported, so `HEAD` sees progress while the body
/// is still arriving.
struct UploadBodyWriter: Sendable {
    /// How the body ended.
    enum Ending: Sendable, Equatable {
        /// Every byte of the body arrived.
        case finished
        /// The client went away (or the body was shorter than announced): the bytes so far are kept.
        case cut
        /// The `dropAfterBytes` fault stopped reading: the caller closes the connection.
        case dropped
        /// The body carried more bytes than the upload has room for; the rest was not read.
        case overflow
    }

    struct Outcome: Sendable {
        /// Bytes written to the file, from the start offset on.
        var written: Int64
        var ending: Ending
        /// The digest over exactly the written bytes, when one was asked for.
        var digest: ChecksumDigest?
    }

    static let flushSize = 1 << 20

    let stats: SandboxStats

    /// Writes `body` to `path` from `start` on.
    /// - Parameters:
    ///   - limit: at most this many bytes are written (the room left in the upload).
    ///   - dropAfter: stop after reading this many body bytes (the `dropAfterBytes` fault).
    ///   - digest: a digest to feed with the written bytes (tus checksum extension).
    ///   - progress: told the absolute end offset after each write; not called when `digest` is
    ///     set, because unverified bytes must not count before the checksum matched.
    func write(
        _ body: RequestBody,
        to path: String,
        from start: Int64,
        limit: Int64,
        dropAfter: Int64?,
        digest: ChecksumDigest?,
        progress: @Sendable (Int64) async -> Void
    ) async throws -> Outcome {
        var outcome = Outcome(written: 0, ending: .finished, digest: digest)
        try await UploadFile.with(path: path, forWriting: true) { file in
            var pending = ByteBuffer()
            pending.reserveCapacity(Self.flushSize)
            var received: Int64 = 0
            var accepted: Int64 = 0

            func flush() async throws {
                guard pending.readableBytes > 0 else { return }
                do {
                    try await file.write(pending, at: start + outcome.written)
                } catch {
                    throw FileWriteFailure(cause: error)
                }
                outcome.written += Int64(pending.readableBytes)
                pending.clear()
                if digest == nil {
                    await progress(start + outcome.written)
                }
            }

            if let dropAfter, dropAfter <= 0 {
                outcome.ending = .dropped
                return
            }
            do {
                for try await chunk in body {
                    self.stats.countBodyBytes(chunk.readableBytes)
                    var slice = chunk
                    received += Int64(chunk.readableBytes)
                    if let dropAfter, received >= dropAfter {
                        let excess = Int(received - dropAfter)
                        slice =
                            chunk.getSlice(at: chunk.readerIndex, length: chunk.readableBytes - excess) ?? ByteBuffer()
                        outcome.ending = .dropped
                    }
                    let room = limit - accepted
                    if Int64(slice.readableBytes) > room {
                        slice = slice.getSlice(at: slice.readerIndex, length: Int(room)) ?? ByteBuffer()
                        outcome.ending = .overflow
                    }
                    outcome.digest?.update(slice)
                    accepted += Int64(slice.readableBytes)
                    pending.writeImmutableBuffer(slice)
                    if pending.readableBytes >= Self.flushSize {
                        try await flush()
                    }
                    if outcome.ending != .finished {
                        break
                    }
                }
            } catch is CancellationError {
                outcome.ending = .cut
            } catch let failure as FileWriteFailure {
                throw failure.cause
            } catch {
                outcome.ending = .cut
            }
            try await flush()
        }
        return outcome
    }
}

/// Wraps a file write failure so it is not mistaken for the client going away.
struct FileWriteFailure: Error {
    var cause: any Error
}
