import Foundation
import StageKit

extension VimeoState {
    /// `POST /videos/ID/versions`: a new source file for a video. Its upload becomes the video's upload at
    /// once (so `upload.status` follows it); when its bytes are in, it is the video's file and transcoding
    /// starts again. An `Idempotency-Key` seen before returns the version it created.
    func createVersion(
        of videoID: String, fileName: String, approach: UploadProtocol, size: Int64?, link: String?,
        idempotencyKey: String?
    ) throws -> VersionRecord {
        if let existingID = self.core.idempotencyKeys.created(by: idempotencyKey, in: .version),
            let existing = self.section.versions[existingID], existing.videoID == videoID
        {
            return existing
        }
        guard var video = self.section.videos[videoID] else { throw APIError.notFound("video") }
        // The new file takes the place of the old one in the quota.
        let free = self.quotaFree + video.size
        if let size, size > free {
            throw APIError.quotaExceeded(size: size, free: free)
        }
        let upload = self.uploads.add(
            id: "v" + RandomID.hex(bytes: 8), uploadProtocol: approach, videoID: videoID, length: size,
            token: RandomID.hex(bytes: 16), sourceLink: link)
        video.uploadID = upload.id
        video.approach = approach
        video.size = size ?? 0
        video.uploadComplete = false
        video.uploadCompletedAt = nil
        video.modifiedAt = Date()
        self.section.videos[videoID] = video
        let version = self.addVersion(of: videoID, fileName: fileName, uploadID: upload.id)
        self.core.idempotencyKeys.remember(idempotencyKey, in: .version, created: version.id)
        self.core.index.persist()
        return version
    }

    /// Records a version of a video's file.
    @discardableResult
    func addVersion(of videoID: String, fileName: String, uploadID: String) -> VersionRecord {
        let version = VersionRecord(
            id: self.newVideoID(), videoID: videoID, fileName: fileName,
            uploadID: uploadID, createdAt: Date())
        self.section.versions[version.id] = version
        return version
    }

    /// A video's versions, newest first.
    func versions(of videoID: String) -> [VersionRecord] {
        self.section.versions.values.filter { $0.videoID == videoID }.sorted {
            ($0.createdAt, $0.id) > ($1.createdAt, $1.id)
        }
    }

    /// Forgets a video's versions; returns their uploads, for the caller to remove.
    func removeVersions(of videoID: String) -> [String] {
        let versions = self.versions(of: videoID)
        let ids = Set(versions.map(\.id))
        for id in ids {
            self.section.versions.removeValue(forKey: id)
        }
        self.core.idempotencyKeys.forget(ids)
        return versions.map(\.uploadID)
    }

    /// The API JSON of a version: `active` is the newest version whose bytes are all in.
    func render(_ version: VersionRecord) -> JSONValue {
        let active = self.versions(of: version.videoID).first { self.uploads.record($0.uploadID)?.isComplete ?? false }
        let upload = self.uploads.record(version.uploadID)
        return VersionRepresentation(baseURL: self.baseURL).render(
            version, upload: upload, active: active?.id == version.id)
    }
}
