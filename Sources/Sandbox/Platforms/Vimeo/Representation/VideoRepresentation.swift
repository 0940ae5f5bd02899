import Foundation
import StageKit

/// The JSON Vimeo API 3.4 returns for a video, restricted to the fields an upload workflow uses.
///
/// Simplifications: `link` points at a small page of the sandbox instead of vimeo.com; `duration`,
/// `width` and `height` stay 0 since the sandbox does not transcode; transcoding "finishes" a
/// configured delay after the upload completes.
struct VideoRepresentation {
    let baseURL: String
    let transcodeDelay: Duration

    func render(_ video: VideoRecord, upload: UploadRecord?, now: Date = Date()) -> JSONValue {
        let transcoded: Bool
        if let completedAt = video.uploadCompletedAt, video.uploadComplete {
            transcoded = now.timeIntervalSince(completedAt) >= self.transcodeDelay.seconds
        } else {
            transcoded = false
        }
        let status: String
        if upload?.failure != nil {
            status = "uploading_error"
        } else if !video.uploadComplete {
            status = "uploading"
        } else if !transcoded {
            status = "transcoding"
        } else {
            status = "available"
        }
        return [
            "uri": .string("/videos/\(video.id)"),
            "type": "video",
            "name": .string(video.name),
            "description": .optional(video.description),
            "link": .string("\(self.baseURL)/videos/\(video.id)/watch"),
            "duration": 0,
            "width": 0,
            "height": 0,
            "created_time": .string(HTTPDate.iso8601(video.createdAt)),
            "modified_time": .string(HTTPDate.iso8601(video.modifiedAt)),
            "privacy": [
                "view": .string(video.privacyView),
                "embed": "public",
                "download": true,
                "add": true,
                "comments": "anybody",
            ],
            "status": .string(status),
            "is_playable": .bool(transcoded),
            "tags": .array(video.tags.map(Self.tag)),
            "user": ["uri": "/users/1", "name": "Sandbox User"],
            "upload": self.upload(video, upload: upload),
            "transcode": ["status": .string(transcoded ? "complete" : "in_progress")],
        ]
    }

    /// Vimeo's tag object.
    static func tag(_ name: String) -> JSONValue {
        let canonical = name.lowercased().replacingOccurrences(of: " ", with: "")
        return [
            "uri": .string("/tags/\(canonical)"),
            "name": .string(name),
            "tag": .string(name),
            "canonical": .string(canonical),
        ]
    }

    private func upload(_ video: VideoRecord, upload: UploadRecord?) -> JSONValue {
        let completeURI =
            video.approach == .streaming
            ? "/users/1/uploads/\(video.id)?video_file_id=\(video.videoFileID)&signature=\(video.signature)" : nil
        return UploadRepresentation(baseURL: self.baseURL).render(
            upload, approach: video.approach, size: video.size, complete: video.uploadComplete,
            completeURI: completeURI)
    }
}

/// The `upload` object of a video or a version, as Vimeo 3.4 shows it: `upload_link` to send the bytes to
/// (tus, streaming), `link` for a pull, `complete_uri` for streaming.
struct UploadRepresentation {
    let baseURL: String

    func render(
        _ upload: UploadRecord?, approach: UploadProtocol, size: Int64, complete: Bool, completeURI: String?
    ) -> JSONValue {
        let status = complete ? "complete" : upload?.failure == nil ? "in_progress" : "error"
        let link = upload.map { TusRoutes.link(baseURL: self.baseURL, uploadID: $0.id, token: $0.token) }
        var members: [String: JSONValue] = [
            "approach": .string(approach.rawValue),
            "status": .string(status),
            "size": .integer(size),
            "upload_link": approach == .pull ? .null : .optional(link),
            "form": .null,
            "redirect_url": .null,
            "link": .optional(upload?.sourceLink),
            "complete_uri": .optional(completeURI),
        ]
        if approach == .streaming {
            members["upload_link_secure"] = .optional(link)
        }
        return .object(members)
    }
}
