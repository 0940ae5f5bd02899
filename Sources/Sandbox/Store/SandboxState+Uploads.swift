import Foundation
import HTTPTypes
import StageKit

extension SandboxState {
    /// Creates a standalone tus upload (`POST /upload`), not tied to a video.
    func createStandaloneUpload(length: Int64, metadata: String?) -> UploadRecord {
        let now = Date()
        let upload = UploadRecord(
            id: RandomID.hex(bytes: 16),
            uploadProtocol: .tus,
            videoID: nil,
            assetID: nil,
            length: length,
            offset: 0,
            token: nil,
            metadata: metadata,
            createdAt: now,
            expiresAt: now.addingTimeInterval(self.configuration.uploadLifetime.seconds),
            completedAt: nil
        )
        self.folder.createUploadFile(upload.id)
        self.index.uploads[upload.id] = upload
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

    /// When the last byte is in: stamps the upload and, for a tus video, sets `upload.status`
    /// to `complete` (a streaming video waits for `complete_uri`).
    private func markCompleteIfDone(_ id: String) {
        guard var upload = self.index.uploads[id], upload.isComplete, upload.completedAt == nil else { return }
        let now = Date()
        upload.completedAt = now
        self.index.uploads[id] = upload
        if upload.uploadProtocol == .tus, let videoID = upload.videoID, var video = self.index.videos[videoID] {
            video.uploadComplete = true
            video.uploadCompletedAt = now
            self.index.videos[videoID] = video
        }
    }
}
