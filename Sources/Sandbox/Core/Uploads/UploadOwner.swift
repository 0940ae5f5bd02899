import StageKit

/// A platform whose records follow its uploads (Vimeo's videos take their size and `upload.status` from
/// theirs).
///
/// The store asks its owners within the step that changes the upload, so the platform's records and the
/// upload never disagree, not even in the index written after the step.
@SandboxActor
protocol UploadOwner: AnyObject {
    /// The most bytes `upload`, whose size was not known, may declare; `nil` when the owner sets no bound of
    /// its own (the largest upload bounds every upload anyway).
    func room(forDeclaring upload: UploadRecord) -> Int64?
    /// `upload`'s size is known now.
    func uploadDeclaredLength(_ upload: UploadRecord)
    /// Every byte of `upload` is stored.
    func uploadCompleted(_ upload: UploadRecord)
}
