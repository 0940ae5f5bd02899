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
        guard let uploadValue = body["upload"] else {
            throw APIError.invalidParameter("upload", "The `upload` object is required (with `approach` and `size`).")
        }
        guard let upload = uploadValue.objectValue else {
            throw APIError.invalidParameter("upload", "`upload` must be an object.")
        }
        try self.rejectUnknown(upload, allowed: self.uploadKeys, prefix: "upload.")
        guard let approachText = upload["approach"]?.stringValue else {
            throw APIError.invalidParameter("upload.approach", "`upload.approach` is required: `tus` or `streaming`.")
        }
        guard let approach = UploadProtocol(rawValue: approachText) else {
            throw APIError.invalidParameter(
                "upload.approach",
                "The sandbox supports the `tus` and `streaming` approaches, not `\(approachText)`."
            )
        }
        guard let sizeValue = upload["size"] else {
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
        let change = try self.change(body, allowingUnknown: true)
        return VideoCreation(
            name: change.name,
            description: change.description ?? nil,
            privacyView: change.privacyView,
            approach: approach,
            size: size
        )
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
