import StageKit

/// The JSON Vimeo returns for a version of a video's file (`POST`/`GET /videos/ID/versions`).
struct VersionRepresentation {
    let baseURL: String

    func render(_ version: VersionRecord, upload: UploadRecord?, active: Bool) -> JSONValue {
        [
            "uri": .string("/videos/\(version.videoID)/versions/\(version.id)"),
            "file_name": .string(version.fileName),
            "active": .bool(active),
            "created_time": .string(HTTPDate.iso8601(version.createdAt)),
            "upload": UploadRepresentation(baseURL: self.baseURL).render(
                upload, approach: upload?.uploadProtocol ?? .tus, size: upload?.length ?? 0,
                complete: upload?.isComplete ?? false, completeURI: nil),
        ]
    }
}
