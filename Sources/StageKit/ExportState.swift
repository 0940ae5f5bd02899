/// What is known of a followed export's file at one moment (``FollowedExport/waitFor(bytes:of:)``).
public struct ExportState: Sendable, Hashable {
    /// The file to read: the one being written, or the finished file once ``finishedSize`` is known; nil before
    /// the export began writing and when it ended without a file. Open it once per ``attempt`` and keep it open:
    /// the export renames the file it writes into place when it finishes (a file gone before it could be opened
    /// was renamed: wait for the export to end).
    public var file: String?
    /// Bytes at the start that change when the export finishes: read them last, from the finished file.
    public var head: Int64
    /// Bytes written and durable: those from ``head`` to here are final. Zero after the export wrote its file
    /// again (``rewritten``) until it finishes.
    public var final: Int64
    /// The finished file's size; nil while it is written.
    public var finishedSize: Int64?
    /// The export's attempt that writes ``file``, from 1; 0 before the first began.
    public var attempt: Int
    /// The export wrote its file again after saying bytes were final: a reader reads the finished file again.
    public var rewritten: Bool
    /// Why the export ended without a file (it failed, or was skipped); nil otherwise.
    public var failure: String?

    /// A state.
    public init(
        file: String?, head: Int64, final: Int64, finishedSize: Int64?, attempt: Int, rewritten: Bool,
        failure: String?
    ) {
        self.file = file
        self.head = head
        self.final = final
        self.finishedSize = finishedSize
        self.attempt = attempt
        self.rewritten = rewritten
        self.failure = failure
    }
}
