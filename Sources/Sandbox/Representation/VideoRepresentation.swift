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
        if !video.uploadComplete {
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
        let token = upload?.token.map { "?token=\($0)" } ?? ""
        let link = "\(self.baseURL)/upload/\(video.uploadID)\(token)"
        var members: [String: JSONValue] = [
            "approach": .string(video.approach.rawValue),
            "status": .string(video.uploadComplete ? "complete" : "in_progress"),
            "size": .integer(video.size),
            "upload_link": .string(link),
            "form": .null,
            "redirect_url": .null,
            "link": .null,
        ]
        switch video.approach {
        case .tus:
            members["complete_uri"] = .null
        case .streaming:
            members["upload_link_secure"] = .string(link)
            members["complete_uri"] = .string(
                "/users/1/uploads/\(video.id)?video_file_id=\(video.videoFileID)&signature=\(video.signature)"
            )
        }
        return .object(members)
    }
}
