import Hummingbird
import NIOCore
import StageKit

/// One request writing bytes into an upload, for both protocols: takes the write lease, applies
/// the drop fault, streams the body to disk with ``UploadBodyWriter``, and always returns the lease
/// with the offset that really reached the disk.
struct UploadWriteSession {
    let core: SandboxCore

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
        let uploads = self.core.uploads
        let uploadID = lease.id
        let path = uploads.path(of: uploadID)
        let writer = UploadBodyWriter(stats: self.core.stats)
        let outcome: UploadBodyWriter.Outcome
        do {
            outcome = try await writer.write(
                request.body,
                to: path,
                from: start,
                limit: limit,
                dropAfter: self.core.faults.dropLimit(),
                digest: checksum?.digest,
                progress: { offset in await uploads.progress(uploadID, offset: offset) }
            )
        } catch {
            // The disk failed us: keep whatever the file holds and give the lease back.
            let stored = self.core.folder.storedLength(uploadID) ?? start
            await uploads.endWrite(uploadID, offset: min(stored, lease.length))
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
                upload = await uploads.endWrite(uploadID, offset: start + outcome.written)
            } else {
                try? await self.truncate(path, to: start)
                upload = await uploads.endWrite(uploadID, offset: start, resetTo: start)
            }
        } else {
            upload = await uploads.endWrite(uploadID, offset: start + outcome.written)
        }

        if outcome.ending == .dropped {
            self.core.stats.countDroppedConnection()
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
