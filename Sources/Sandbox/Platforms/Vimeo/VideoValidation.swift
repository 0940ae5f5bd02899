import Foundation
import StageKit

/// Validation of the JSON bodies of `POST /me/videos` and `PATCH /videos/ID`, naming the offending
/// field as Vimeo does (`invalid_parameters[].field`, error code 2204).
///
/// Fields Vimeo documents but the sandbox does not model (`embed`, `folder_uri`, `license`, …)
/// are accepted and ignored; any other field is an error, so a misspelt field never passes
/// silently.
enum VideoValidation {
    /// `privacy.view` values Vimeo documents.
    static let privacyViews: Set<String> = [
        "anybody", "contacts", "disable", "nobody", "password", "unlisted", "users",
    ]

    private static let ignoredTopLevel: Set<String> = [
        "embed", "folder_uri", "license", "locale", "content_rating", "spatial", "review_page",
        "hide_from_vimeo", "embed_domains", "ratings",
    ]
    private static let privacyKeys: Set<String> = ["view", "embed", "download", "add", "comments"]
    private static let uploadKeys: Set<String> = ["approach", "size", "redirect_url", "link"]

    static func creation(_ body: [String: JSONValue], maxSize: Int64) throws -> VideoCreation {
        try self.rejectUnknown(body, allowed: ["name", "description", "privacy", "upload", "password"])
        let upload = try self.upload(body, approaches: [.tus, .streaming, .pull], maxSize: maxSize)
        let change = try self.change(body, allowingUnknown: true)
        return VideoCreation(
            name: change.name,
            description: change.description ?? nil,
            privacyView: change.privacyView,
            approach: upload.approach,
            size: upload.size,
            link: upload.link
        )
    }

    /// `POST /videos/ID/versions`: `file_name` and an `upload` object (tus or pull).
    static func version(_ body: [String: JSONValue], maxSize: Int64) throws -> (
        fileName: String, approach: UploadProtocol, size: Int64?, link: String?
    ) {
        try self.rejectUnknown(body, allowed: ["file_name", "upload"])
        guard let fileName = body["file_name"]?.stringValue, !fileName.isEmpty else {
            throw APIError.invalidParameter("file_name", "`file_name` is required: the new file's name.")
        }
        let upload = try self.upload(body, approaches: [.tus, .pull], maxSize: maxSize)
        return (fileName, upload.approach, upload.size, upload.link)
    }

    /// The `upload` object: `approach`, `size` (required except for a pull) and, for a pull, `link`.
    private static func upload(
        _ body: [String: JSONValue], approaches: [UploadProtocol], maxSize: Int64
    ) throws -> (approach: UploadProtocol, size: Int64?, link: String?) {
        guard let uploadValue = body["upload"] else {
            throw APIError.invalidParameter("upload", "The `upload` object is required (with `approach` and `size`).")
        }
        guard let upload = uploadValue.objectValue else {
            throw APIError.invalidParameter("upload", "`upload` must be an object.")
        }
        try self.rejectUnknown(upload, allowed: self.uploadKeys, prefix: "upload.")
        let names = approaches.map { "`\($0.rawValue)`" }.joined(separator: ", ")
        guard let approachText = upload["approach"]?.stringValue else {
            throw APIError.invalidParameter("upload.approach", "`upload.approach` is required: \(names).")
        }
        guard let approach = UploadProtocol(rawValue: approachText), approaches.contains(approach) else {
            throw APIError.invalidParameter(
                "upload.approach", "This endpoint of the sandbox supports \(names), not `\(approachText)`.")
        }
        var link: String?
        if approach == .pull {
            guard let text = upload["link"]?.stringValue, let url = URL(string: text),
                ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil
            else {
                throw APIError.invalidParameter("upload.link", "A pull needs `upload.link`, an http or https URL.")
            }
            link = text
        }
        guard let sizeValue = upload["size"] else {
            if approach == .pull { return (approach, nil, link) }
            throw APIError.invalidParameter(
                "upload.size", "`upload.size` is required for the \(approachText) approach.")
        }
        guard let size = sizeValue.integerValue, size > 0 else {
            throw APIError.invalidParameter("upload.size", "`upload.size` must be a positive number of bytes.")
        }
        guard size <= maxSize else {
            throw APIError.invalidParameter(
                "upload.size", "`upload.size` exceeds the largest upload, \(maxSize) bytes.")
        }
        return (approach, size, link)
    }

    /// Legacy streaming (`type: streaming`): a request of API 3.2 or 3.3 (asked for in `Accept`:
    /// `application/vnd.vimeo.*+json;version=3.2`), which takes no size; `redirect_url` and
    /// `upgrade_to_1080` are accepted and have no effect here.
    static func legacyTicket(_ body: [String: JSONValue], accept: String?) throws {
        let version = accept?.split(separator: ";").compactMap { parameter -> String? in
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            return pair.count == 2 && pair[0] == "version" ? pair[1] : nil
        }.first
        guard version == "3.2" || version == "3.3" else {
            throw APIError.invalidParameter(
                "type",
                "`type: streaming` belongs to API 3.2 and 3.3; ask for one with `Accept: application/vnd.vimeo.*+json;version=3.2`, or use `upload.approach`."
            )
        }
        try self.rejectUnknown(body, allowed: ["type", "redirect_url", "upgrade_to_1080"])
        guard body["type"]?.stringValue == "streaming" else {
            throw APIError.invalidParameter("type", "`type` must be `streaming`; for other uploads send `upload`.")
        }
    }

    static func change(_ body: [String: JSONValue], allowingUnknown: Bool = false) throws -> VideoChange {
        if !allowingUnknown {
            try self.rejectUnknown(body, allowed: ["name", "description", "privacy", "password"])
        }
        var change = VideoChange()
        if let name = body["name"] {
            guard let text = name.stringValue else {
                throw APIError.invalidParameter("name", "`name` must be a string.")
            }
            change.name = text
        }
        if let description = body["description"] {
            switch description {
            case .null: change.description = .some(nil)
            case .string(let text): change.description = .some(text)
            default: throw APIError.invalidParameter("description", "`description` must be a string.")
            }
        }
        if let privacyValue = body["privacy"] {
            guard let privacy = privacyValue.objectValue else {
                throw APIError.invalidParameter("privacy", "`privacy` must be an object.")
            }
            try self.rejectUnknown(privacy, allowed: self.privacyKeys, prefix: "privacy.")
            if let view = privacy["view"] {
                guard let text = view.stringValue, self.privacyViews.contains(text) else {
                    throw APIError.invalidParameter(
                        "privacy.view",
                        "`privacy.view` must be one of \(self.privacyViews.sorted().joined(separator: ", "))."
                    )
                }
                if text == "password", body["password"]?.stringValue == nil {
                    throw APIError.invalidParameter("password", "`password` is required when privacy.view is password.")
                }
                change.privacyView = text
            }
        }
        return change
    }

    /// Tags from `PUT /videos/ID/tags`: an array of `{"name": …}` objects or of strings.
    static func tags(_ body: JSONValue) throws -> [String] {
        guard let elements = body.arrayValue else {
            throw APIError.invalidParameter("tags", "The body must be a JSON array of tags.")
        }
        return try elements.enumerated().map { index, element in
            if let text = element.stringValue ?? element["name"]?.stringValue ?? element["tag"]?.stringValue,
                !text.isEmpty
            {
                return text
            }
            throw APIError.invalidParameter("[\(index)].name", "Each tag must be a string or an object with `name`.")
        }
    }

    private static func rejectUnknown(
        _ object: [String: JSONValue],
        allowed: Set<String>,
        prefix: String = ""
    ) throws {
        for key in object.keys.sorted() where !allowed.contains(key) {
            if prefix.isEmpty, self.ignoredTopLevel.contains(key) { continue }
            throw APIError.invalidParameter(prefix + key, "`\(prefix + key)` is not a field this endpoint accepts.")
        }
    }
}
