import Foundation
import StageKit

/// How the bytes of an upload arrive.
enum UploadProtocol: String, Codable, Sendable {
    /// tus 1.0.0 (`PATCH` with `Upload-Offset`).
    case tus
    /// Vimeo's legacy streaming approach: `PUT` with `Content-Range`, `308` with `Range`.
    case streaming
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

    var isComplete: Bool { self.offset >= self.length }
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

    init() {}

    /// Reads an index; one written before pictures existed has none.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        nextVideoNumber = try container.decode(Int64.self, forKey: .nextVideoNumber)
        videos = try container.decode([String: VideoRecord].self, forKey: .videos)
        assets = try container.decode([String: AssetRecord].self, forKey: .assets)
        uploads = try container.decode([String: UploadRecord].self, forKey: .uploads)
        idempotencyKeys = try container.decode([String: String].self, forKey: .idempotencyKeys)
        pictures = try container.decodeIfPresent([String: PictureRecord].self, forKey: .pictures) ?? [:]
    }
}
