import StageKit

/// A platform whose records follow uploads (Vimeo's videos take their size and `upload.status` from
/// theirs).
///
/// The store tells every observer about every upload, whichever platform made it; an observer picks out its
/// own. It does so within the step that changes the upload, so the platform's records and the upload never
/// disagree, not even in the index written after the step.
@SandboxActor
protocol UploadObserver: AnyObject {
    /// The most bytes `upload`, whose size was not known, may declare; `nil` when the observer sets no bound
    /// of its own (the largest upload bounds every upload anyway).
    func room(forDeclaring upload: UploadRecord) -> Int64?
    /// `upload`'s size is known now.
    func uploadDeclaredLength(_ upload: UploadRecord)
    /// Every byte of `upload` is stored.
    func uploadCompleted(_ upload: UploadRecord)
}
