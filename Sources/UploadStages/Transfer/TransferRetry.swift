import Logging
import StageKit

/// Retries inside an upload stage: transient failures are retried with exponential backoff and jitter,
/// and the count starts over whenever bytes got through, so a long upload over a flaky link keeps going
/// as long as it progresses. Fatal errors and cancellation pass straight through.
struct TransferRetry: Sendable {
    /// Consecutive failures without progress before giving up.
    var attempts: Int
    /// Waits between attempts.
    var policy: RetryPolicy

    init(attempts: Int) {
        self.attempts = max(1, attempts)
        self.policy = RetryPolicy(
            attempts: attempts, initialDelay: TimeSpan(seconds: 0.5), maxDelay: TimeSpan(seconds: 20))
    }

    /// Runs `step` until it returns true (done). `progress` reports a number that grows when bytes got
    /// through (the server's offset, finished parts).
    func run(
        logger: Logger, progress: @Sendable () async -> Int64, _ step: () async throws -> Bool
    ) async throws {
        var failures = 0
        var lastProgress = await progress()
        while true {
            do {
                if try await step() { return }
            } catch let error as UploadError where error.disposition.isRetryable {
                let now = await progress()
                if now > lastProgress {
                    failures = 0
                    lastProgress = now
                }
                failures += 1
                guard failures < attempts else { throw error }
                guard case .retryable(let minimum) = error.disposition else { throw error }
                let delay = policy.delay(afterAttempt: failures, minimum: minimum)
                logger.warning(
                    "\(error.message); retrying in \(TimeSpan(seconds: delay.seconds)) (\(failures)/\(attempts - 1))")
                try await Task.sleep(for: delay)
            }
        }
    }
}
