public import StageKit

/// Why the upload stages that do not follow an export refuse `"stream": true` (``Stage/streamRefusal(with:inputs:)``).
enum UploadStreaming {
    /// An object store's multipart upload could send its first part last, but this stage does not follow an export
    /// yet. Which stages do is theirs to declare (``StageKit/StreamRole/follower``), not this one's to list.
    static let notFollowingYet =
        "it does not follow an export yet, though its parts could go head last: upload it after the export (leave out stream)"
}

extension HTTPUploadStage {
    /// A PUT cannot send the head last.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
        "a Content-Range PUT sends the file from its first byte on, and the export rewrites its head when it finishes; upload it after the export (leave out stream)"
    }
}

extension PresignedUploadStage {
    /// Its parts could go head last; it does not follow an export yet.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
        UploadStreaming.notFollowingYet
    }
}

extension TusUploadStage {
    /// A streamed upload concatenates partial uploads it creates itself.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
        guard options["url"] != nil else { return nil }
        return
            "a streamed tus upload creates partial uploads and concatenates them: give endpoint, not url (an upload someone else created, such as Vimeo's, cannot take its head last)"
    }
}
