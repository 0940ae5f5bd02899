import Foundation
import HTTPTypes
import StageKit

/// What `POST /me/videos` asks for, validated.
struct VideoCreation: Sendable {
    var name: String?
    var description: String?
    var privacyView: String?
    var approach: UploadProtocol
    /// `upload.size`; a pull may leave it out.
    var size: Int64?
    /// pull: `upload.link`, where the sandbox fetches the file.
    var link: String?
}

/// A change `PATCH /videos/ID` asks for; `nil` leaves a field as it is.
struct VideoChange: Sendable {
    var name: String?
    /// `.some(nil)` clears the description (JSON `null`).
    var description: String??
    var privacyView: String?
}

extension VimeoState {
    /// Creates a video and its upload, or returns the one an earlier request with the same
    /// `Idempotency-Key` created.
    func createVideo(_ creation: VideoCreation, idempotencyKey: String?) throws -> VideoRecord {
        if let existingID = self.core.idempotencyKeys.created(by: idempotencyKey, in: .video),
            let existing = self.section.videos[existingID]
        {
            return existing
        }
        let free = self.quotaFree
        if let size = creation.size, size > free {
            throw APIError.quotaExceeded(size: size, free: free)
        }
        let id = self.newVideoID()
        let upload = self.uploads.add(
            id: id, uploadProtocol: creation.approach, videoID: id, length: creation.size,
            token: RandomID.hex(bytes: 16), sourceLink: creation.link)
        let video = self.addVideo(
            id: id, name: creation.name, description: creation.description, privacyView: creation.privacyView,
            upload: upload, fileName: creation.name ?? "Untitled")
        self.core.idempotencyKeys.remember(idempotencyKey, in: .video, created: id)
        self.core.index.persist()
        return video
    }

    /// The next video id: numbers, as Vimeo's.
    func newVideoID() -> String {
        defer { self.section.nextVideoNumber += 1 }
        return String(self.section.nextVideoNumber)
    }

    /// Stores a video whose file is `upload`, with that upload as its first version.
    func addVideo(
        id: String, name: String?, description: String?, privacyView: String?, upload: UploadRecord, fileName: String
    ) -> VideoRecord {
        let now = Date()
        let video = VideoRecord(
            id: id,
            name: name ?? "Untitled",
            description: description,
            privacyView: privacyView ?? "anybody",
            approach: upload.uploadProtocol,
            size: upload.length,
            uploadID: upload.id,
            videoFileID: String(UInt32.random(in: 100_000_000...999_999_999)),
            signature: RandomID.hex(bytes: 16),
            uploadComplete: false,
            uploadCompletedAt: nil,
            tags: [],
            createdAt: now,
            modifiedAt: now
        )
        self.section.videos[id] = video
        self.addVersion(of: id, fileName: fileName, uploadID: upload.id)
        return video
    }

    /// The video `id`, `nil` when there is none (the routes answer Vimeo's 404).
    func video(_ id: String) -> VideoRecord? {
        self.section.videos[id]
    }

    /// All videos, newest first (Vimeo's default `sort=date`, `direction=desc`).
    func videos() -> [VideoRecord] {
        self.section.videos.values.sorted { left, right in
            if left.createdAt != right.createdAt { return left.createdAt > right.createdAt }
            return (Int64(left.id) ?? 0) > (Int64(right.id) ?? 0)
        }
    }

    /// `PATCH /videos/ID`: applies `change` (fields left `nil` keep their value) and writes the index.
    func updateVideo(_ id: String, _ change: VideoChange) throws -> VideoRecord {
        guard var video = self.section.videos[id] else { throw APIError.notFound("video") }
        if let name = change.name { video.name = name }
        if let description = change.description { video.description = description }
        if let view = change.privacyView { video.privacyView = view }
        video.modifiedAt = Date()
        self.section.videos[id] = video
        self.core.index.persist()
        return video
    }

    /// `PUT /videos/ID/tags`: replaces the video's tags, each once in the order first given, as Vimeo keeps
    /// them.
    func setTags(_ id: String, _ tags: [String]) throws -> VideoRecord {
        guard var video = self.section.videos[id] else { throw APIError.notFound("video") }
        var unique: [String] = []
        for tag in tags where !unique.contains(tag) {
            unique.append(tag)
        }
        video.tags = unique
        video.modifiedAt = Date()
        self.section.videos[id] = video
        self.core.index.persist()
        return video
    }

    /// Deletes a video with its upload, freeing its quota. `false` when there is no such video.
    func deleteVideo(_ id: String) -> Bool {
        guard let video = self.section.videos.removeValue(forKey: id) else { return false }
        self.removePictures(of: id)
        for uploadID in Set([video.uploadID] + self.removeVersions(of: id)) {
            self.cancelPull(uploadID)
            self.uploads.remove(uploadID)
        }
        let tickets = Set(self.section.tickets.values.filter { $0.videoID == id }.map(\.id))
        for ticket in tickets { self.section.tickets.removeValue(forKey: ticket) }
        self.core.idempotencyKeys.forget(tickets.union([id]))
        self.core.index.persist()
        return true
    }

    /// Legacy streaming: `DELETE complete_uri`. Calling it again after success succeeds again, so a
    /// client that lost the first response can repeat it.
    func completeStreaming(videoID: String, videoFileID: String?, signature: String?) throws -> VideoRecord {
        guard var video = self.section.videos[videoID], video.approach == .streaming else {
            throw APIError.notFound("upload")
        }
        try APIError.checkCompleteURI(
            videoFileID: videoFileID, signature: signature, expected: (video.videoFileID, video.signature))
        if video.uploadComplete {
            return video
        }
        let stored = self.uploads.record(video.uploadID)?.offset ?? 0
        guard stored >= video.size else { throw APIError.incompleteUpload(stored: stored, size: video.size) }
        video.uploadComplete = true
        video.uploadCompletedAt = Date()
        self.section.videos[videoID] = video
        self.core.index.persist()
        return video
    }
}
