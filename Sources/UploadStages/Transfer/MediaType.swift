import Foundation

/// Media types by file extension, for `Upload-Metadata` and `Content-Type`.
enum MediaType {
    static func guess(for name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "mp4", "m4v": "video/mp4"
        case "mov": "video/quicktime"
        case "mkv": "video/x-matroska"
        case "webm": "video/webm"
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "json": "application/json"
        case "m3u8": "application/vnd.apple.mpegurl"
        case "m4s": "video/iso.segment"
        case "mpd": "application/dash+xml"
        case "m4a": "audio/mp4"
        default: "application/octet-stream"
        }
    }
}
