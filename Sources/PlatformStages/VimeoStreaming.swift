public import StageKit

extension VimeoConnection {
    /// Why no Vimeo stage follows an export as it is written, and what does instead.
    static let streamRefusal =
        "Vimeo needs the file's size when the upload is created and cannot concatenate parts; stream to S3 (s3.upload with shareFor) and let \(VimeoTicketStage.stageType) with approach pull fetch the shared URL"
}

extension VimeoTicketStage {
    /// Vimeo cannot take a file's head last.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
        VimeoConnection.streamRefusal
    }
}

extension VimeoActivateStage {
    /// Vimeo cannot take a file's head last.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
        VimeoConnection.streamRefusal
    }
}

extension VimeoMetadataStage {
    /// Vimeo cannot take a file's head last.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
        VimeoConnection.streamRefusal
    }
}

extension VimeoWaitStage {
    /// Vimeo cannot take a file's head last.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
        VimeoConnection.streamRefusal
    }
}

extension VimeoPictureStage {
    /// Vimeo cannot take a file's head last.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
        VimeoConnection.streamRefusal
    }
}
