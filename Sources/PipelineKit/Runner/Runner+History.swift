import Foundation
import StageKit

extension Runner {
    /// Records an attempt that did not simply succeed in its item's history (``AttemptHistory``): one that ended
    /// with `error` (interrupted when the item's task was cancelled, failed otherwise), or, with none, a success
    /// that logged a warning. A store that keeps no history, or a lease lost to another worker, records nothing.
    ///
    /// The history is what a person reads afterwards: a write of it that fails does not fail the stage, whose
    /// checkpoint says how it ended.
    func remember(
        ending error: (any Error)?, ref: ItemVersion, seconds: Double, _ journal: StageJournal, _ log: AttemptLog
    ) async {
        guard let history = store as? any AttemptHistory else { return }
        if let state = error as? StateError, state.code == .leaseLost { return }
        let outcome: StageAttempt.Outcome =
            switch error {
            case nil: .succeeded
            case is CancellationError: .interrupted
            case .some where Task.isCancelled: .interrupted
            case .some: .failed
            }
        let record = await journal.current
        let now = Date()
        let attempt = StageAttempt(
            version: ref.version, stage: record.stage, attempt: record.attempts, startedAt: record.startedAt ?? now,
            finishedAt: now, seconds: seconds, outcome: outcome, error: error.map(report), log: log.lines)
        try? await history.recordAttempt(attempt, of: ref.item)
    }
}
