import Foundation
import StageKit

extension Runner {
    /// Records an attempt that did not succeed in its item's history (``AttemptHistory``): one that ended with
    /// `error` (interrupted when the item's task was cancelled, failed otherwise). A success is never recorded (its
    /// checkpoint holds it, and a done item grows by nothing). A store that keeps no history, or a lease lost to another worker, records nothing.
    ///
    /// The history is what a person reads afterwards: a write of it that fails does not fail the stage, whose
    /// checkpoint says how it ended.
    func remember(
        ending error: any Error, ref: ItemVersion, seconds: Double, _ journal: StageJournal, _ log: AttemptLog
    ) async {
        guard let history = store as? any AttemptHistory else { return }
        if let state = error as? StateError, state.code == .leaseLost { return }
        let outcome: StageAttempt.Outcome =
            error is CancellationError || Task.isCancelled ? .interrupted : .failed
        let record = await journal.current
        let now = Date()
        let attempt = StageAttempt(
            version: ref.version, stage: record.stage, attempt: record.attempts, startedAt: record.startedAt ?? now,
            finishedAt: now, seconds: seconds, outcome: outcome, error: report(error), log: log.lines)
        try? await history.recordAttempt(attempt, of: ref.item)
    }
}
