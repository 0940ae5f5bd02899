import StageKit

/// The JSON of a video's picture, as Vimeo documents it (`uri`, `active`, `type`, `link`, `sizes`); `link`
/// is where the image is uploaded with a `PUT`, and `sizes` lists the one size the sandbox keeps (it does
/// not scale images).
enum PictureRepresentation {
    static func render(_ picture: PictureRecord, baseURL: String) -> JSONValue {
        let image = "\(baseURL)/pictures/\(picture.id)?token=\(picture.token)"
        return [
            "uri": .string("/videos/\(picture.videoID)/pictures/\(picture.id)"),
            "active": .bool(picture.active),
            "type": "custom",
            "link": .string(image),
            "sizes": picture.bytes == nil ? [] : [["link": .string(image), "bytes": .integer(picture.bytes ?? 0)]],
            "resource_key": .string(picture.token),
        ]
    }
}
