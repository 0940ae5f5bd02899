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
        progress: @escaping @Sendable (Int64) async -> Void
    ) async throws -> Outcome {
        var outcome = Outcome(written: 0, ending: .finished, digest: digest)
        try await UploadFile.with(path: path, forWriting: true) { file in
            if let dropAfter, dropAfter <= 0 {
                outcome.ending = .dropped
                return
            }
            var cut = BodyCut(limit: limit, dropAfter: dropAfter)
            var pending = PendingWrite(file: file, start: start, progress: digest == nil ? progress : nil)
            do {
                for try await chunk in body {
                    self.stats.countBodyBytes(chunk.readableBytes)
                    let (slice, ending) = cut.take(chunk)
                    outcome.digest?.update(slice)
                    try await pending.append(slice)
                    if let ending {
                        outcome.ending = ending
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
            try await pending.flush()
            outcome.written = pending.written
        }
        return outcome
    }

    /// What of each body chunk is kept: the bytes before the `dropAfterBytes` cut, within the upload's room.
    private struct BodyCut {
        let limit: Int64
        let dropAfter: Int64?
        var received: Int64 = 0
        var accepted: Int64 = 0

        /// The part of `chunk` to write, and how the body ends when it ends with this chunk.
        mutating func take(_ chunk: ByteBuffer) -> (slice: ByteBuffer, ending: Ending?) {
            var slice = chunk
            var ending: Ending?
            self.received += Int64(chunk.readableBytes)
            if let dropAfter, self.received >= dropAfter {
                let excess = Int(self.received - dropAfter)
                slice = chunk.getSlice(at: chunk.readerIndex, length: chunk.readableBytes - excess) ?? ByteBuffer()
                ending = .dropped
            }
            let room = self.limit - self.accepted
            if Int64(slice.readableBytes) > room {
                slice = slice.getSlice(at: slice.readerIndex, length: Int(room)) ?? ByteBuffer()
                ending = .overflow
            }
            self.accepted += Int64(slice.readableBytes)
            return (slice, ending)
        }
    }

    /// Kept bytes gathered into writes of ``flushSize``.
    private struct PendingWrite {
        let file: UploadFile
        let start: Int64
        /// Told the end offset after each write; `nil` while the bytes are unverified.
        let progress: (@Sendable (Int64) async -> Void)?
        var buffer = ByteBuffer()
        /// Bytes written so far, from `start` on.
        var written: Int64 = 0

        init(file: UploadFile, start: Int64, progress: (@Sendable (Int64) async -> Void)?) {
            self.file = file
            self.start = start
            self.progress = progress
            self.buffer.reserveCapacity(UploadBodyWriter.flushSize)
        }

        mutating func append(_ slice: ByteBuffer) async throws {
            self.buffer.writeImmutableBuffer(slice)
            if self.buffer.readableBytes >= UploadBodyWriter.flushSize {
                try await self.flush()
            }
        }

        mutating func flush() async throws {
            guard self.buffer.readableBytes > 0 else { return }
            do {
                try await self.file.write(self.buffer, at: self.start + self.written)
            } catch {
                throw FileWriteFailure(cause: error)
            }
            self.written += Int64(self.buffer.readableBytes)
            self.buffer.clear()
            await self.progress?(self.start + self.written)
        }
    }
}

/// Wraps a file write failure so it is not mistaken for the client going away.
struct FileWriteFailure: Error {
    var cause: any Error
}
