public import StageKit

/// Why the upload stages that do not follow an export refuse `"stream": true` (``Stage/streamRefusal(with:inputs:)``).
enum UploadStreaming {
    /// An object store's multipart upload could send its first part last, but only these do for now.
    static let headLastElsewhere =
        "only \(S3UploadStage.stageType) and \(TusUploadStage.stageType) stream for now (the head goes last); upload it after the export"
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
        UploadStreaming.headLastElsewhere
    }
}

extension OSSUploadStage {
    /// Its parts could go head last; it does not follow an export yet.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
        UploadStreaming.headLastElsewhere
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
