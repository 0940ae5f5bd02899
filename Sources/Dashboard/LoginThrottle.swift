import NIOConcurrencyHelpers

/// Slows down guessing the token: after a few wrong tokens from one client (and after more from all clients
/// together), each further try must wait twice as long as the one before, up to five minutes. While it waits, every
/// try is refused without looking at the token, the right one included, so guessing cannot go faster than the
/// waits allow.
final class LoginThrottle: Sendable {
    /// Wrong tokens a client may give before it has to wait.
    static let freeFailures = 5
    /// Wrong tokens all clients together may give before every client has to wait.
    static let freeFailuresOfAll = 50
    /// The longest wait.
    static let longestWait: Duration = .seconds(300)
    /// How many clients are remembered at most; the ones not seen for longest are forgotten first.
    static let capacity = 4096
    /// The key that counts every client's wrong tokens together.
    private static let everyone = "*"

    private struct Record {
        var failures = 0
        var waitUntil: ContinuousClock.Instant?
        var lastFailure: ContinuousClock.Instant
    }

    private let now: @Sendable () -> ContinuousClock.Instant
    private let records = NIOLockedValueBox<[String: Record]>([:])

    /// A throttle reading the time from `now` (a test's clock, or the continuous clock).
    init(now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.now = now
    }

    /// How long `client` must still wait before a token it gives is looked at; nil: it may try now.
    func wait(for client: String) -> Duration? {
        let now = self.now()
        return records.withLockedValue { records in
            [client, Self.everyone].compactMap { key -> Duration? in
                guard let until = records[key]?.waitUntil, until > now else { return nil }
                return now.duration(to: until)
            }.max()
        }
    }

    /// Records a wrong token from `client`.
    func failed(_ client: String) {
        let now = self.now()
        records.withLockedValue { records in
            if records.count >= Self.capacity,
                let stalest = records.filter({ $0.key != Self.everyone }).min(by: {
                    $0.value.lastFailure < $1.value.lastFailure
                })
            {
                records[stalest.key] = nil
            }
            for (key, free) in [(client, Self.freeFailures), (Self.everyone, Self.freeFailuresOfAll)] {
                var record = records[key] ?? Record(lastFailure: now)
                record.failures += 1
                record.lastFailure = now
                if record.failures > free {
                    record.waitUntil = now + Self.waitAfter(failuresOverFree: record.failures - free)
                }
                records[key] = record
            }
        }
    }

    /// Forgets `client`'s wrong tokens once it gave the right one.
    func succeeded(_ client: String) {
        _ = records.withLockedValue { $0.removeValue(forKey: client) }
    }

    /// 1 s after the first wrong token over the free ones, then 2 s, 4 s, … up to ``longestWait``.
    static func waitAfter(failuresOverFree count: Int) -> Duration {
        guard count < 10 else { return longestWait }
        return min(.seconds(1 << (count - 1)), longestWait)
    }
}
