import Foundation
import StageKit

/// How the bytes of an upload arrive.
enum UploadProtocol: String, Codable, Sendable {
    /// tus 1.0.0 (`PATCH` with `Upload-Offset`).
    case tus
    /// Vimeo's legacy streaming approach: `PUT` with `Content-Range`, `308` with `Range`.
    case streaming
    /// Vimeo's pull approach: the sandbox fetches the file from `upload.link` itself.
    case pull
}

/// One stored upload: a file `uploads/ID.bin` in the data folder plus this record.
struct UploadRecord: Codable, Sendable {
    var id: String
    var uploadProtocol: UploadProtocol
    /// The video or asset the bytes belong to; `nil` for a standalone tus upload (`POST /upload`).
    var videoID: String?
    var assetID: String?
    /// `Upload-Length`: the declared size in bytes.
    var length: Int64
    /// Bytes stored: always a contiguous prefix of the file.
    var offset: Int64
    /// Secret the upload link carries as `?token=`; `nil` when the id alone is the capability.
    var token: String?
    /// `Upload-Metadata` as the client sent it.
    var metadata: String?
    var createdAt: Date
    var expiresAt: Date
    /// When the last byte arrived.
    var completedAt: Date?
    /// `true` while the size is not known yet: a legacy streaming ticket (the first `PUT` declares it) or a
    /// pull without `upload.size` (the fetch learns it). `nil` in indexes written before, meaning `false`.
    var lengthDeferred: Bool?
    /// pull: the URL the sandbox fetches the file from.
    var sourceLink: String?
    /// pull: why fetching the file failed; the video's `upload.status` is then `error`.
    var failure: String?

    var isComplete: Bool { self.lengthDeferred != true && self.offset >= self.length }
}

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

/// An asset of the generic "another platform" API.
struct AssetRecord: Codable, Sendable {
    var id: String
    var name: String
    var size: Int64
    var title: String?
    var tags: [String]
    /// `created` until completed, then `ready`.
    var status: String
    var sha256: String?
    var uploadID: String
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

/// Everything the sandbox remembers, written to `index.json` after every change.
struct SandboxIndex: Codable, Sendable {
    var version = 1
    var nextVideoNumber: Int64 = 100_000_001
    var videos: [String: VideoRecord] = [:]
    var assets: [String: AssetRecord] = [:]
    var uploads: [String: UploadRecord] = [:]
    /// `Idempotency-Key` (prefixed by the resource kind) → the id it created.
    var idempotencyKeys: [String: String] = [:]
    var pictures: [String: PictureRecord] = [:]
    var tickets: [String: TicketRecord] = [:]
    var versions: [String: VersionRecord] = [:]
    /// ApsaraVideo VOD's videos and images and OSS's objects and multipart uploads.
    var aliyun = AliyunIndex()

    init() {}

    /// Reads an index; one written before pictures, tickets, versions or Alibaba Cloud existed has none of them.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        nextVideoNumber = try container.decode(Int64.self, forKey: .nextVideoNumber)
        videos = try container.decode([String: VideoRecord].self, forKey: .videos)
        assets = try container.decode([String: AssetRecord].self, forKey: .assets)
        uploads = try container.decode([String: UploadRecord].self, forKey: .uploads)
        idempotencyKeys = try container.decode([String: String].self, forKey: .idempotencyKeys)
        pictures = try container.decodeIfPresent([String: PictureRecord].self, forKey: .pictures) ?? [:]
        tickets = try container.decodeIfPresent([String: TicketRecord].self, forKey: .tickets) ?? [:]
        versions = try container.decodeIfPresent([String: VersionRecord].self, forKey: .versions) ?? [:]
        aliyun = try container.decodeIfPresent(AliyunIndex.self, forKey: .aliyun) ?? AliyunIndex()
    }
}
