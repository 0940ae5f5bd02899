import Foundation
import StageKit

/// An ApsaraVideo VOD video, as `CreateUploadVideo` creates it: its source file is the OSS object
/// `bucket/object`; its status moves from `Uploading` to `UploadSucc` when that object is complete, then to
/// `Transcoding` and `Normal` as the configured transcode delay passes.
struct VODVideoRecord: Codable, Sendable {
    var id: String
    var title: String
    var fileName: String
    var fileSize: Int64?
    var description: String?
    var coverURL: String?
    var cateID: Int64?
    var tags: String?
    var templateGroupID: String?
    var userData: String?
    /// `ReferenceId`: the caller's own id, unique among the account's videos.
    var referenceID: String?
    var bucket: String
    var object: String
    /// When the source object was completed (nil while uploading).
    var uploadedAt: Date?
    /// The source's size once it arrived.
    var size: Int64?
    /// Whether its transcode fails (status `TranscodeFail` once its source arrived), a sandbox fault.
    var transcodeFails: Bool?
    var createdAt: Date
    var modifiedAt: Date
}

/// An image made by `CreateUploadImage` (a cover, by default): its bytes are the OSS object `bucket/object`.
struct VODImageRecord: Codable, Sendable {
    var id: String
    var imageType: String
    var bucket: String
    var object: String
    var url: String
    var uploadedAt: Date?
    var createdAt: Date
}

/// An OSS object: its bytes are the file `uploads/oss-FILE.bin` (``OSSFiles``).
struct OSSObjectRecord: Codable, Sendable {
    var bucket: String
    var key: String
    var fileID: String
    var size: Int64
    /// `"HEX"` for a simple upload, `"HEX-N"` for a multipart one, quotes included, as OSS answers it.
    var etag: String
    var contentType: String
    var modifiedAt: Date
}

/// One part of an OSS multipart upload: its bytes are the file `uploads/oss-part-UPLOAD-N.bin`.
struct OSSPartRecord: Codable, Sendable {
    var number: Int
    var etag: String
    var size: Int64
    var modifiedAt: Date
}

/// An OSS multipart upload, from `InitiateMultipartUpload` until it is completed or aborted.
struct OSSMultipartRecord: Codable, Sendable {
    var id: String
    var bucket: String
    var key: String
    var contentType: String
    var parts: [OSSPartRecord]
    var createdAt: Date
}

/// A URL-based upload job of `UploadMediaByURL`: VOD fetches `uploadURL` itself, then makes the video (its
/// `MediaId`) from the file. Its `status` goes `PENDING` → `DOWNLOADING` → `SUCCESS`, or ends in a `…_FAIL` with an
/// error code and message.
struct VODURLJobRecord: Codable, Sendable {
    var id: String
    /// The URL, decoded.
    var uploadURL: String
    var sessionID: String?
    var userData: String?
    /// The `UploadMetadatas` entry whose `SourceURL` is this URL: `Title`, `Description`, `Tags`, `CateId`,
    /// `CoverURL`, `FileExtension`, as strings.
    var metadata: [String: String]
    var templateGroupID: String?
    var status: String
    var mediaID: String?
    var errorCode: String?
    var errorMessage: String?
    var fileSize: Int64?
    var createdAt: Date
    var completedAt: Date?
}

/// Alibaba Cloud's records: what ``AliyunState`` keeps, written under the key `aliyun` of `index.json`
/// (``AliyunSection``).
struct AliyunRecords: Codable, Sendable {
    var videos: [String: VODVideoRecord] = [:]
    var images: [String: VODImageRecord] = [:]
    /// `bucket/key` → object.
    var objects: [String: OSSObjectRecord] = [:]
    var multipartUploads: [String: OSSMultipartRecord] = [:]
    /// `UploadMediaByURL`'s jobs by JobId.
    var urlJobs: [String: VODURLJobRecord] = [:]

    private enum CodingKeys: String, CodingKey {
        case videos, images, objects, multipartUploads, urlJobs
    }

    init() {}

    /// Reads the records; an index written before a kind of record existed has none of it.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        videos = try container.decodeIfPresent([String: VODVideoRecord].self, forKey: .videos) ?? [:]
        images = try container.decodeIfPresent([String: VODImageRecord].self, forKey: .images) ?? [:]
        objects = try container.decodeIfPresent([String: OSSObjectRecord].self, forKey: .objects) ?? [:]
        multipartUploads =
            try container.decodeIfPresent([String: OSSMultipartRecord].self, forKey: .multipartUploads) ?? [:]
        urlJobs = try container.decodeIfPresent([String: VODURLJobRecord].self, forKey: .urlJobs) ?? [:]
    }

    /// Writes the records; `urlJobs` only when there are some, so an index from before they existed is written
    /// back byte for byte.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(videos, forKey: .videos)
        try container.encode(images, forKey: .images)
        try container.encode(objects, forKey: .objects)
        try container.encode(multipartUploads, forKey: .multipartUploads)
        if !urlJobs.isEmpty { try container.encode(urlJobs, forKey: .urlJobs) }
    }
}

/// Alibaba Cloud's part of `index.json`: its records under one key, `aliyun`.
struct AliyunSection: IndexSection {
    var aliyun = AliyunRecords()
}

extension AliyunSection {
    /// Reads the section; an index written before Alibaba Cloud existed has none.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(aliyun: try container.decodeIfPresent(AliyunRecords.self, forKey: .aliyun) ?? AliyunRecords())
    }
}

/// A temporary credential the sandbox issued with an upload address (`UploadAuth`): it works only for the
/// one object it was issued for, only with its security token, and only until it expires.
struct STSCredential: Sendable {
    var accessKeyID: String
    var accessKeySecret: String
    var securityToken: String
    var expiresAt: Date
    var bucket: String
    var object: String
}
