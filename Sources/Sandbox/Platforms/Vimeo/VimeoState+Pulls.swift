import Logging
import StageKit

extension VimeoState {
    /// Starts `fetch` for a pull upload that nobody fetches yet (nothing for any other upload, so a create
    /// replayed by its idempotency key does not fetch twice). The task is kept until it ends, so deleting the
    /// video or stopping the sandbox cancels it.
    func startPull(_ id: String, fetch: @escaping @Sendable (UploadRecord) async -> Void) {
        guard let upload = self.uploads.record(id), upload.uploadProtocol == .pull, !upload.isComplete,
            upload.failure == nil, self.pulls[id] == nil
        else { return }
        self.pulls[id] = Task { await fetch(upload) }
    }

    /// The most a pull of unknown size may bring: the largest upload, within the free quota.
    var pullLimit: Int64 {
        min(self.core.configuration.maxUploadSize, self.quotaFree)
    }

    /// A pull whose last byte arrived at `offset`.
    func finishPull(_ id: String, offset: Int64) {
        self.pulls[id] = nil
        self.uploads.endWrite(id, offset: offset)
    }

    /// A pull that failed: the video shows `upload.status: error`.
    func failPull(_ id: String, _ reason: String) {
        self.pulls[id] = nil
        guard self.uploads.recordFailure(id, reason) else { return }
        self.core.logger.warning("sandbox: pull of upload \(id) failed: \(reason)")
        self.core.index.persist()
    }

    /// Cancels the pull of `id`, if one is under way.
    func cancelPull(_ id: String) {
        self.pulls.removeValue(forKey: id)?.cancel()
    }

    /// Stops every pull under way (the sandbox is stopping).
    func cancelPulls() {
        for task in self.pulls.values { task.cancel() }
        self.pulls = [:]
    }
}
