import Foundation
import HTTPTypes
import StageKit

/// ApsaraVideo VOD: its videos and images, whose bytes are OSS objects.
extension AliyunState {
    /// `CreateUploadVideo`: a video whose source is to be uploaded to a new object of the bucket.
    func createVODVideo(_ video: VODVideoRecord) throws -> VODVideoRecord {
        if let reference = video.referenceID,
            self.records.videos.values.contains(where: { $0.referenceID == reference })
        {
            throw VODError(
                status: .badRequest, code: "InvalidParameter.ReferenceId",
                message: "The ReferenceId \(reference) is already used by another video.")
        }
        self.records.videos[video.id] = video
        self.core.index.persist()
        return video
    }

    /// A video by `VideoId`, or by `ReferenceId` when no id is given.
    func vodVideo(id: String?, referenceID: String?) -> VODVideoRecord? {
        if let id { return self.records.videos[id] }
        guard let referenceID else { return nil }
        return self.records.videos.values.first { $0.referenceID == referenceID }
    }

    /// `UpdateVideoInfo`: replaces the fields given.
    func updateVODVideo(_ id: String, _ change: @Sendable (inout VODVideoRecord) -> Void) throws -> VODVideoRecord {
        guard var video = self.records.videos[id] else { throw VODError.videoNotFound }
        change(&video)
        video.modifiedAt = Date()
        self.records.videos[id] = video
        self.core.index.persist()
        return video
    }

    /// `DeleteVideo`: removes the videos and their source objects; returns the ids that did not exist.
    func deleteVODVideos(_ ids: [String]) -> [String] {
        var missing: [String] = []
        for id in ids {
            guard let video = self.records.videos.removeValue(forKey: id) else {
                missing.append(id)
                continue
            }
            self.removeObject(bucket: video.bucket, key: video.object)
        }
        self.core.index.persist()
        return missing
    }

    /// A video's `Status`: `Uploading` until its source object is complete, then `UploadSucc`, `Transcoding`
    /// and `Normal` as the transcode delay passes (half of it each); `TranscodeFail` for a video whose transcode
    /// fails (a fault).
    func vodStatus(_ video: VODVideoRecord) -> String {
        guard let uploadedAt = video.uploadedAt else { return "Uploading" }
        if video.transcodeFails == true { return "TranscodeFail" }
        let elapsed = Date().timeIntervalSince(uploadedAt)
        let delay = self.core.configuration.transcodeDelay.seconds
        if elapsed < delay / 2 { return "UploadSucc" }
        if elapsed < delay { return "Transcoding" }
        return self.core.configuration.vodReview ? "Checking" : "Normal"
    }

    /// `CreateUploadImage`.
    func createVODImage(_ image: VODImageRecord) -> VODImageRecord {
        self.records.images[image.id] = image
        self.core.index.persist()
        return image
    }
}
