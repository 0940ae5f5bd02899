import Hummingbird
import NIOCore
import StageKit

/// One request writing bytes into an upload, for both protocols: takes the write lease, applies
/// the drop fault, streams the body to disk with ``UploadBodyWriter``, and always returns the lease
/// with the offset that really reached the disk.
struct UploadWriteSession {
    let services: SandboxServices

    struct Result {
        /// The upload after the request (its offset is what `HEAD` will report).
        var upload: UploadRecord
        var ending: UploadBodyWriter.Ending
        /// For checksummed writes: whether the checksum matched (bytes kept) or not (discarded).
        var checksumMatched: Bool?
    }

    /// Writes `request`'s body at `start`, at most `limit` bytes. The caller has validated the
    /// request; `lease` is the record returned by `beginWrite`.
    func write(
        _ request: Request,
        context: SandboxRequestContext,
        lease: UploadRecord,
        start: Int64,
        limit: Int64,
        checksum: (digest: ChecksumDigest, expected: [UInt8])?
    ) async throws -> Result {
        let state = self.services.state
        let uploadID = lease.id
        let path = state.folder.uploadPath(uploadID)
        let writer = UploadBodyWriter(stats: self.services.stats)
        let outcome: UploadBodyWriter.Outcome
        do {
            outcome = try await writer.write(
                request.body,
                to: path,
                from: start,
                limit: limit,
                dropAfter: self.services.faults.dropLimit(),
                digest: checksum?.digest,
                progress: { offset in await state.progress(uploadID, offset: offset) }
            )
        } catch {
            // The disk failed us: keep whatever the file holds and give the lease back.
            let stored = state.folder.storedLength(uploadID) ?? start
            await state.endWrite(uploadID, offset: min(stored, lease.length))
            throw UploadFailure(.internalServerError, "Cannot store the upload: \(error)")
        }

        var checksumMatched: Bool?
        let upload: UploadRecord?
        if let checksum {
            // Unverified bytes must not count: keep them only when the whole body arrived and the
            // digest matches; otherwise cut the file back to where this request started.
            let matched = outcome.ending == .finished && outcome.digest?.finalize() == checksum.expected
            checksumMatched = matched
            if matched {
                upload = await state.endWrite(uploadID, offset: start + outcome.written)
            } else {
                try? await self.truncate(path, to: start)
                upload = await state.endWrite(uploadID, offset: start, resetTo: start)
            }
        } else {
            upload = await state.endWrite(uploadID, offset: start + outcome.written)
        }

        if outcome.ending == .dropped {
            self.services.stats.countDroppedConnection()
            context.channel.close(promise: nil)
        }
        guard let upload else {
            throw UploadFailure(.notFound, "The upload was removed while the request was writing to it.")
        }
        return Result(upload: upload, ending: outcome.ending, checksumMatched: checksumMatched)
    }

    private func truncate(_ path: String, to length: Int64) async throws {
        try await UploadFile.with(path: path, forWriting: true) { file in
            try await file.truncate(to: length)
        }
    }
}
