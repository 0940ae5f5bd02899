import HTTPTransport
import Logging
import StageKit

/// Retries inside an upload stage, under the stage's retry policy (``StageContext/retryPolicy``, the
/// workflow's `retry`): transient failures are retried with its backoff and jitter, and its attempts count
/// consecutive failures without progress (the count starts over whenever bytes got through), so a long
/// upload over a flaky link keeps going as long as it progresses. Each retry is reported to the run
/// (``StageContext/retrying(attempt:after:because:)``); the engine does not retry these stages again.
/// Fatal errors, expired credentials and cancellation pass straight through.
struct TransferRetry: Sendable {
    let context: StageContext

    /// Runs `step` until it returns true (done). `progress` reports a number that grows when bytes got
    /// through (the server's offset, finished parts).
    func run(progress: @Sendable () async -> Int64, _ step: () async throws -> Bool) async throws {
        let policy = context.retryPolicy
        var failures = 0
        var lastProgress = await progress()
        while true {
            do {
                if try await step() { return }
            } catch let error as any ClassifiedError where error.disposition.isRetryable {
                let now = await progress()
                if now > lastProgress {
                    failures = 0
                    lastProgress = now
                }
                failures += 1
                guard failures < policy.attempts else { throw error }
                guard case .retryable(let minimum) = error.disposition else { throw error }
                let delay = policy.delay(afterAttempt: failures, minimum: minimum)
                context.retrying(attempt: failures, after: delay, because: error)
                try await Task.sleep(for: delay)
            }
        }
    }
}
