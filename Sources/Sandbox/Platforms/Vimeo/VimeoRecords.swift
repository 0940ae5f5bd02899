import Foundation
import StageKit

/// A legacy streaming upload ticket (`POST /me/videos` with `type: streaming`, API 3.2/3.3): not a video
/// yet; `DELETE complete_uri` makes the video from its bytes.
struct TicketRecord: Codable, Sendable {
    /// `ticket_id`, also the id of its upload.
    var id: String
    /// The `video_file_id` and `signature` its `complete_uri` carries.
    var videoFileID: String
    var signature: String
    var createdAt: Date
    /// The video `complete_uri` made, once it was called.
    var videoID: String?
}

/// A version of a video's source file (`POST /videos/ID/versions`): its bytes arrive as an upload of their
/// own, and once they are in, they are the video's file.
struct VersionRecord: Codable, Sendable {
    var id: String
    var videoID: String
    var fileName: String
    var uploadID: String
    var createdAt: Date
}

/// A video, as `POST /me/videos` creates it.
struct VideoRecord: Codable, Sendable {
    var id: String
    var name: String
    var description: String?
    /// `privacy.view`.
    var privacyView: String
    var approach: UploadProtocol
    var size: Int64
    var uploadID: String
    /// Legacy streaming only: the `video_file_id` and `signature` of `complete_uri`.
    var videoFileID: String
    var signature: String
    /// `upload.status`: `in_progress` until the bytes are in (tus) or `complete_uri` was called
    /// (streaming), then `complete`.
    var uploadComplete: Bool
    /// When the upload completed: transcoding "finishes" a configured delay later.
    var uploadCompletedAt: Date?
    var tags: [String]
    var createdAt: Date
    var modifiedAt: Date
}

/// A picture (thumbnail) of a video, as `POST /videos/ID/pictures` creates it; its image arrives with a
/// `PUT` to its `link` and is kept as `uploads/picture-ID.bin`.
struct PictureRecord: Codable, Sendable {
    var id: String
    var videoID: String
    /// The video's active picture; at most one of a video's pictures is.
    var active: Bool
    /// The secret its `link` carries as `?token=`.
    var token: String
    /// The image's size and `Content-Type`, once it arrived.
    var bytes: Int64?
    var contentType: String?
    var createdAt: Date
}

/// Vimeo's part of `index.json`.
struct VimeoSection: IndexSection {
    /// The next video id: ids are numbers, as Vimeo's; versions and pictures take theirs from the same count.
    var nextVideoNumber: Int64 = 100_000_001
    var videos: [String: VideoRecord] = [:]
    var pictures: [String: PictureRecord] = [:]
    var tickets: [String: TicketRecord] = [:]
    var versions: [String: VersionRecord] = [:]
}

extension VimeoSection {
    /// Reads Vimeo's section; one written before pictures, tickets or versions existed has none of them.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        nextVideoNumber = try container.decode(Int64.self, forKey: .nextVideoNumber)
        videos = try container.decode([String: VideoRecord].self, forKey: .videos)
        pictures = try container.decodeIfPresent([String: PictureRecord].self, forKey: .pictures) ?? [:]
        tickets = try container.decodeIfPresent([String: TicketRecord].self, forKey: .tickets) ?? [:]
        versions = try container.decodeIfPresent([String: VersionRecord].self, forKey: .versions) ?? [:]
    }
}
