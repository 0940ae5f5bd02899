import Foundation
import HTTPTypes

/// The limits ApsaraVideo VOD's API reference gives the texts of a video or an image (CreateUploadVideo,
/// UpdateVideoInfo, CreateUploadImage: a Title of at most 128 characters, a Description of at most 1,024, at most
/// 16 comma-separated Tags of at most 32 characters each, all UTF-8), the emoji its error table refuses
/// (`IllegalCharacters`), and the file extensions its "Upload media files" page lists, enforced as the service
/// does with its error codes.
enum VODTextRules {
    /// Video and audio extensions VOD takes in a `FileName`.
    static let mediaExtensions: Set<String> = [
        "mp4", "ts", "3gp", "mpg", "mpeg", "mpe", "dat", "vob", "asf", "avi", "wmv", "flv", "f4v", "rm", "rmvb",
        "mov", "mkv", "m3u8", "dv", "gif", "m2t", "m4v", "mj2", "mjpeg", "mts", "ogg", "qt", "swf", "webm", "mp3",
        "wma", "wav", "aac", "ra", "m4a", "flac", "ape", "ac3", "amr", "caf", "acm",
    ]

    /// Refuses a `Title`, `Description` or `Tags` of `call` beyond its limit.
    static func check(_ call: RPCCall) throws {
        try self.check(texts: call.parameters)
    }

    /// Refuses a `Title`, `Description` or `Tags` of `texts` (a call's parameters, or an `UploadMetadatas` entry)
    /// beyond its limit.
    static func check(texts: [String: String]) throws {
        if let title = texts["Title"] { try self.check(title, named: "Title", atMost: 128) }
        if let description = texts["Description"] {
            try self.check(description, named: "Description", atMost: 1024)
        }
        if let tags = texts["Tags"] {
            let list = tags.split(separator: ",")
            guard list.count <= 16 else {
                throw VODError(
                    status: .badRequest, code: "TagsExceededMax", message: "The number of tags exceeds the maximum 16.")
            }
            for tag in list { try self.check(String(tag), named: "Tags", atMost: 32) }
        }
    }

    /// Refuses a `FileName` whose extension VOD does not take.
    static func checkExtension(of fileName: String) throws {
        let fileExtension = (fileName as NSString).pathExtension.lowercased()
        guard mediaExtensions.contains(fileExtension) else {
            throw VODError(
                status: .badRequest, code: "InvalidFileName.Extension",
                message: "The file name extension \"\(fileExtension)\" of \"\(fileName)\" is not supported.")
        }
    }

    private static func check(_ text: String, named parameter: String, atMost length: Int) throws {
        guard text.unicodeScalars.count <= length else {
            throw VODError(
                status: .badRequest, code: "LengthExceededMax",
                message: "The length of the parameter \(parameter) exceeds the maximum \(length).")
        }
        guard !text.unicodeScalars.contains(where: { $0.value > 0xFFFF || $0.properties.isEmojiPresentation }) else {
            throw VODError(
                status: .badRequest, code: "IllegalCharacters",
                message: "The parameter \(parameter) cannot contain emoji.")
        }
    }
}
