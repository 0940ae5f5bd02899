import Foundation
import HTTPTypes
import Logging
import StageKit

extension SandboxState {
    /// Stores a new, empty upload (record and file) that expires after the configured lifetime. A
    /// `length` of nil is learnt later: from the first `PUT` (legacy streaming) or from the fetch (pull).
    func addUpload(
        id: String, uploadProtocol: UploadProtocol, videoID: String? = nil, assetID: String? = nil, length: Int64?,
        token: String?, metadata: String? = nil, sourceLink: String? = nil
    ) -> UploadRecord {
        let now = Date()
        let upload = UploadRecord(
            id: id, uploadProtocol: uploadProtocol, videoID: videoID, assetID: assetID, length: length ?? 0,
            offset: 0, token: token, metadata: metadata, createdAt: now,
            expiresAt: now.addingTimeInterval(self.configuration.uploadLifetime.seconds), completedAt: nil,
            lengthDeferred: length == nil ? true : nil, sourceLink: sourceLink)
        self.folder.createUploadFile(id)
        self.index.uploads[id] = upload
        return upload
    }

    /// Creates a standalone tus upload (`POST /upload`), not tied to a video.
    func createStandaloneUpload(length: Int64, metadata: String?) -> UploadRecord {
        let upload = self.addUpload(
            id: RandomID.hex(bytes: 16), uploadProtocol: .tus, length: length, token: nil, metadata: metadata)
        self.persist()
        return upload
    }

    /// Sets the size of an upload whose size was not known (``UploadRecord/lengthDeferred``), within the
    /// largest upload and the free quota.
    func declareLength(_ id: String, _ length: Int64) throws -> UploadRecord {
        guard var upload = self.index.uploads[id] else { throw UploadFailure(.notFound, "No such upload.") }
        guard upload.lengthDeferred == true else { return upload }
        guard length > 0 else { throw UploadFailure(.badRequest, "The file is empty.") }
        guard length <= self.configuration.maxUploadSize else {
            throw UploadFailure(
                .contentTooLarge, "The file exceeds the largest upload, \(self.configuration.maxUploadSize) bytes.")
        }
        guard length <= self.quotaFree else {
            throw UploadFailure(
                .contentTooLarge, "The file needs \(length) bytes but the account has \(self.quotaFree) free.")
        }
        upload.length = length
        upload.lengthDeferred = nil
        self.index.uploads[id] = upload
        if let videoID = upload.videoID, var video = self.index.videos[videoID], video.uploadID == id {
            video.size = length
            self.index.videos[videoID] = video
        }
        self.persist()
        return upload
    }

    /// The upload `id` if `token` opens it (uploads created without a token need none) and it has
    /// not expired. Expiry applies to incomplete uploads only.
    func upload(_ id: String, token: String?) throws -> UploadRecord {
        guard let upload = self.index.uploads[id] else {
            throw UploadFailure(.notFound, "No such upload.")
        }
        if let expected = upload.token, expected != token {
            throw UploadFailure(.forbidden, "The upload link's token is missing or wrong.")
        }
        if !upload.isComplete, upload.expiresAt < Date() {
            throw UploadFailure(.gone, "The upload expired.")
        }
        return upload
    }

    /// Any upload by id, for the sandbox's own inspection endpoints.
    func anyUpload(_ id: String) -> UploadRecord? {
        self.index.uploads[id]
    }

    /// Takes the write lease on an upload. At most one request writes to an upload at a time;
    /// another gets 423 Locked. With `expectedOffset` (tus) a mismatch is 409 Conflict.
    func beginWrite(_ id: String, token: String?, expectedOffset: Int64?) throws -> UploadRecord {
        let upload = try self.upload(id, token: token)
        guard !self.writers.contains(id) else {
            throw UploadFailure(.init(code: 423, reasonPhrase: "Locked"), "Another request is writing to this upload.")
        }
        if let expectedOffset, expectedOffset != upload.offset {
            throw UploadFailure(
                .conflict,
                "Upload-Offset \(expectedOffset) does not match the stored offset \(upload.offset).",
                headers: [.uploadOffset: String(upload.offset)]
            )
        }
        self.writers.insert(id)
        return upload
    }

    /// Records bytes that reached the file while a request is still writing, so `HEAD` sees them.
    func progress(_ id: String, offset: Int64) {
        guard var upload = self.index.uploads[id] else { return }
        upload.offset = max(upload.offset, min(offset, upload.length))
        self.index.uploads[id] = upload
        self.markCompleteIfDone(id)
    }

    /// Ends the write lease with the final contiguous offset and saves the index. `resetTo`
    /// discards bytes (a checksum mismatch): the offset goes back to that value.
    @discardableResult
    func endWrite(_ id: String, offset: Int64, resetTo: Int64? = nil) -> UploadRecord? {
        self.writers.remove(id)
        guard var upload = self.index.uploads[id] else { return nil }
        if let resetTo {
            upload.offset = resetTo
        } else {
            upload.offset = max(upload.offset, min(offset, upload.length))
        }
        self.index.uploads[id] = upload
        self.markCompleteIfDone(id)
        self.persist()
        return self.index.uploads[id]
    }

    /// tus termination: removes the upload and its bytes. A video keeps existing, without bytes.
    func terminate(_ id: String, token: String?) throws {
        _ = try self.upload(id, token: token)
        guard !self.writers.contains(id) else {
            throw UploadFailure(.init(code: 423, reasonPhrase: "Locked"), "Another request is writing to this upload.")
        }
        self.index.uploads.removeValue(forKey: id)
        self.folder.removeUpload(id)
        self.persist()
    }

    /// Starts `fetch` for a pull upload that nobody fetches yet (nothing for any other upload, so a create
    /// replayed by its idempotency key does not fetch twice). The task is kept until it ends, so deleting the
    /// video or stopping the sandbox cancels it.
    func startPull(_ id: String, fetch: @escaping @Sendable (UploadRecord) async -> Void) {
        guard let upload = self.index.uploads[id], upload.uploadProtocol == .pull, !upload.isComplete,
            upload.failure == nil, self.pulls[id] == nil
        else { return }
        self.pulls[id] = Task { await fetch(upload) }
    }

    /// The most a pull of unknown size may bring: the largest upload, within the free quota.
    var pullLimit: Int64 {
        min(self.configuration.maxUploadSize, self.quotaFree)
    }

    /// A pull whose last byte arrived at `offset`.
    func finishPull(_ id: String, offset: Int64) {
        self.pulls[id] = nil
        self.endWrite(id, offset: offset)
    }

    /// A pull that failed: the video shows `upload.status: error`.
    func failPull(_ id: String, _ reason: String) {
        self.pulls[id] = nil
        guard self.index.uploads[id] != nil else { return }
        self.logger.warning("sandbox: pull of upload \(id) failed: \(reason)")
        self.index.uploads[id]?.failure = reason
        self.persist()
    }

    /// Cancels the pull of `id`, if one is under way.
    func cancelPull(_ id: String) {
        self.pulls.removeValue(forKey: id)?.cancel()
    }

    /// When the last byte is in: stamps the upload and, when it is a video's current upload (tus or pull),
    /// sets the video's `upload.status` to `complete` (a streaming video waits for `complete_uri`).
    func markCompleteIfDone(_ id: String) {
        guard var upload = self.index.uploads[id], upload.isComplete, upload.completedAt == nil else { return }
        let now = Date()
        upload.completedAt = now
        self.index.uploads[id] = upload
        if upload.uploadProtocol != .streaming, let videoID = upload.videoID, var video = self.index.videos[videoID],
            video.uploadID == id
        {
            video.uploadComplete = true
            video.uploadCompletedAt = now
            self.index.videos[videoID] = video
        }
    }
}
