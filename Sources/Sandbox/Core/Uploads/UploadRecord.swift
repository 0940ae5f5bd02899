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

/// One stored upload: a file `uploads/ID.bin` in the data folder plus this record. Its fields are those of
/// every platform's uploads (`videoID` for Vimeo's, `assetID` for the generic API's), as `index.json` has
/// always held them.
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
