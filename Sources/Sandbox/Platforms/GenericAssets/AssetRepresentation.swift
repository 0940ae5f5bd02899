import StageKit

/// The JSON of an asset of the generic API.
enum AssetRepresentation {
    static func render(_ asset: AssetRecord, upload: UploadRecord?, baseURL: String) -> JSONValue {
        [
            "id": .string(asset.id),
            "name": .string(asset.name),
            "size": .integer(asset.size),
            "title": .optional(asset.title),
            "tags": .array(asset.tags.map { .string($0) }),
            "status": .string(asset.status),
            "received": .integer(upload?.offset ?? (asset.status == "ready" ? asset.size : 0)),
            "sha256": .optional(asset.sha256),
            "upload_url": .string("\(baseURL)/generic/assets/\(asset.id)/content"),
            "created_time": .string(HTTPDate.iso8601(asset.createdAt)),
            "modified_time": .string(HTTPDate.iso8601(asset.modifiedAt)),
        ]
    }
}
