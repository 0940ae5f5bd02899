/// The export a streaming stage follows (``StreamRole/follower`` with `"stream": true`), read while it is written.
/// The engine puts one in ``StageContext/services`` under ``FollowedExportKey`` for a follower's run, the same for
/// a built-in stage and across the plugin boundary; without it the stage reads its file as any finished file.
///
/// A reader copies or sends each range of the file once it is final, and the head (``ExportState/head``) last,
/// once the export finished: the export rewrites its head then. A new ``ExportState/attempt`` (the export was
/// retried) writes a new file, which a reader reads from its start again.
public protocol FollowedExport: Sendable {
    /// Waits until the bytes up to `bytes` are final, the export ended, or its attempt is no longer `attempt` (pass
    /// 0 before the first: the first attempt to write then ends the wait); returns what is known then. Throws
    /// `CancellationError` when the stage is cancelled meanwhile.
    func waitFor(bytes: Int64, of attempt: Int) async throws -> ExportState
}

/// The key of a follower's ``FollowedExport`` in ``StageContext/services``.
public enum FollowedExportKey: ServiceKey {
    /// The export the stage follows.
    public typealias Value = any FollowedExport
}
