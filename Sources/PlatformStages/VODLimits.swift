import Foundation
import StageKit

/// What ApsaraVideo VOD's API reference documents of the texts a video or image carries, checked before a request
/// so that an item does not fail for ever on the platform's `LengthExceededMax`, `IllegalCharacters`,
/// `TagsExceededMax` or `InvalidFileName.Extension`:
///
/// - CreateUploadVideo (https://www.alibabacloud.com/help/en/vod/developer-reference/api-vod-2017-03-21-createuploadvideo):
///   "Title … can be up to 128 characters in length" and "must be encoded in UTF-8"; "Description … up to 1,024
///   characters"; "Tags … a maximum of 16 tags … Each tag can be up to 32 characters", separated by commas;
///   "FileName … must contain a file name extension", one of those "Upload media files" lists.
/// - UpdateVideoInfo and CreateUploadImage state the same limits for Title, Description and Tags.
/// - Emoji: VOD's error table answers `IllegalCharacters`, "parameter values cannot contain emoji".
enum VODLimits {
    static let titleLength = 128
    static let descriptionLength = 1024
    static let tagCount = 16
    static let tagLength = 32

    /// The extensions of the audio and video files VOD takes ("Upload media files": video, audio), lower-case.
    static let mediaExtensions: Set<String> = [
        "mp4", "ts", "3gp", "mpg", "mpeg", "mpe", "dat", "vob", "asf", "avi", "wmv", "flv", "f4v", "rm", "rmvb",
        "mov", "mkv", "m3u8", "dv", "gif", "m2t", "m4v", "mj2", "mjpeg", "mts", "ogg", "qt", "swf", "webm", "mp3",
        "wma", "wav", "aac", "ra", "m4a", "flac", "ape", "ac3", "amr", "caf", "acm",
    ]

    /// What is wrong with `text` as the value of `field` (`Title`, `Description`, a tag) of at most `length`
    /// characters; nil when nothing is.
    static func problem(with text: String, field: String, length: Int) -> String? {
        let characters = text.unicodeScalars.count
        if characters > length {
            return "ApsaraVideo VOD takes a \(field) of at most \(length) characters; this one has \(characters)"
        }
        if let emoji = text.unicodeScalars.first(where: isEmoji) {
            return "ApsaraVideo VOD takes no emoji in a \(field) (IllegalCharacters); this one has \(emoji)"
        }
        return nil
    }

    /// What is wrong with comma-separated `tags`; nil when nothing is.
    static func problem(withTags tags: String) -> String? {
        let list = tagList(tags)
        if list.count > tagCount { return "ApsaraVideo VOD takes at most \(tagCount) tags; these are \(list.count)" }
        for tag in list {
            if let problem = problem(with: tag, field: "tag", length: tagLength) { return problem }
        }
        return nil
    }

    /// The tags of comma-separated `tags`, each without the spaces around it.
    static func tagList(_ tags: String) -> [String] {
        tags.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// `tags` as they are checked and sent: the spaces around each left out.
    static func normalized(tags: String) -> String {
        tagList(tags).joined(separator: ",")
    }

    /// What is wrong with a file name VOD is told of (`FileName`); nil when nothing is.
    static func problem(withFileName name: String) -> String? {
        let fileExtension = (name as NSString).pathExtension.lowercased()
        guard !mediaExtensions.contains(fileExtension) else { return nil }
        let shown = fileExtension.isEmpty ? "no extension" : "the extension .\(fileExtension)"
        return
            "ApsaraVideo VOD takes only the audio and video files its \"Upload media files\" page lists (mp4, mov, mkv, …): \(name) has \(shown)"
    }

    /// The title VOD is given for `title`: made to fit when `fit` is true (``fitted(title:)``), else `title` itself
    /// once it is within VOD's limits; one that is not fails with kind invalid-input.
    static func title(_ title: String, fit: Bool) throws -> String {
        if fit { return try fitted(title: title) }
        if let problem = problem(with: title, field: "Title", length: titleLength) {
            throw PlatformError(.invalidInput, "\(problem) (fitTitle: true shortens it)")
        }
        return title
    }

    /// `title` made to fit: emoji left out, then cut to ``titleLength`` characters (never inside a character of
    /// several code points) and the spaces at either end dropped. A title of nothing but emoji has nothing left:
    /// a failure of kind invalid-input, since VOD needs a title.
    static func fitted(title: String) throws -> String {
        var fitted = ""
        var characters = 0
        for character in title where !character.unicodeScalars.contains(where: isEmoji) {
            guard characters + character.unicodeScalars.count <= titleLength else { break }
            fitted.append(character)
            characters += character.unicodeScalars.count
        }
        fitted = fitted.trimmingCharacters(in: .whitespaces)
        guard !fitted.isEmpty else {
            throw PlatformError(
                .invalidInput, "the title \"\(title)\" has nothing ApsaraVideo VOD takes once its emoji are left out")
        }
        return fitted
    }

    /// Emoji as VOD refuses them: pictographs shown as emoji, and anything beyond the Basic Multilingual Plane
    /// (four bytes of UTF-8), where emoji live.
    static func isEmoji(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value > 0xFFFF || scalar.properties.isEmojiPresentation
    }

    /// The problems of the literal texts of `with` (those without a `${…}` template, known before a run): `title`
    /// unless `fitTitle` is true, `description` and `tags`.
    static func problems(in with: JSONValue, fitTitle: Bool) -> [OptionProblem] {
        var problems: [OptionProblem] = []
        func check(_ option: String, _ problem: (String) -> String?) {
            guard let text = with[option]?.stringValue, !text.contains("${"), let found = problem(text) else { return }
            problems.append(OptionProblem(at: JSONPath.root.appending(option), found))
        }
        if !fitTitle { check("title") { problem(with: $0, field: "Title", length: titleLength) } }
        check("description") { problem(with: $0, field: "Description", length: descriptionLength) }
        check("tags", problem(withTags:))
        return problems
    }
}
