import Foundation
import Logging
import NIOConcurrencyHelpers
import StageKit

extension Runner {
    /// Records an attempt that did not succeed in its item's history (``AttemptHistory``), the one place that
    /// decides what is recorded: an attempt that `began` (got its resource slot) and ended with `error`
    /// (interrupted when the item's task was cancelled, failed otherwise). A success is never recorded (its
    /// checkpoint holds it, and a done item grows by nothing). A store that keeps no history, or a lease lost to another worker, records nothing.
    ///
    /// The history is what a person reads afterwards: it is written after the attempt's checkpoint (a shared
    /// batch's store gives it a short patience), and a write of it that fails does not fail the stage, whose
    /// checkpoint says how it ended; the first such failure of a run is told as a notice.
    func remember(
        _ error: any Error, began: Bool, ref: ItemVersion, seconds: Double, journal: StageJournal, log: AttemptLog
    ) async {
        guard began, let history = store as? any AttemptHistory else { return }
        if let state = error as? StateError, state.code == .leaseLost { return }
        let outcome: StageAttempt.Outcome =
            error is CancellationError || Task.isCancelled ? .interrupted : .failed
        let record = await journal.current
        let now = Date()
        let attempt = StageAttempt(
            version: ref.version, stage: record.stage, attempt: record.attempts, startedAt: record.startedAt ?? now,
            finishedAt: now, seconds: seconds, outcome: outcome,
            // An interrupt is no error of the stage's (its checkpoint keeps none either).
            error: outcome == .interrupted ? nil : report(error), log: log.lines)
        do {
            try await history.recordAttempt(attempt, of: ref.item)
        } catch {
            if error.code == .leaseLost { return }
            let first = historyWriteFailed.withLockedValue { failed in
                defer { failed = true }
                return !failed
            }
            guard first else { return }
            let reason = redactor.shown(error.message)
            sink.emit(
                LogLine(
                    level: .notice, item: nil, stage: record.stage,
                    message: "cannot keep the history of failed attempts (\(reason)); the run goes on without it"))
        }
    }
}
