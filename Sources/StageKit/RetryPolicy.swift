import Foundation

/// Retries with exponential backoff and full jitter.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included (1 means no retry).
    public var attempts: Int
    /// The wait before the first retry.
    public var initialDelay: TimeSpan
    /// The longest wait between attempts.
    public var maxDelay: TimeSpan
    /// How much the wait grows after each attempt.
    public var multiplier: Double

    /// Three attempts, 1 s then 2 s apart (with jitter), waits capped at 30 s.
    public static let standard = RetryPolicy(
        attempts: 3, initialDelay: TimeSpan(seconds: 1), maxDelay: TimeSpan(seconds: 30), multiplier: 2)

    /// Creates a policy.
    public init(attempts: Int, initialDelay: TimeSpan, maxDelay: TimeSpan, multiplier: Double = 2) {
        self.attempts = attempts
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.multiplier = multiplier
    }

    /// The wait after the `attempt`-th failure (from 1): a random share of the exponential delay, at
    /// least half of it, so parallel clients spread out but never hammer.
    public func delay(afterAttempt attempt: Int, minimum: Duration? = nil) -> Duration {
        let exponential = initialDelay.seconds * pow(multiplier, Double(max(0, attempt - 1)))
        let capped = min(maxDelay.seconds, exponential)
        let jittered = capped * Double.random(in: 0.5...1.0)
        let chosen = Duration.milliseconds(Int64(jittered * 1000))
        if let minimum, minimum > chosen { return minimum }
        return chosen
    }
}

extension RetryPolicy {
    /// The policy as JSON, delays in seconds: how it crosses the plugin boundary.
    package var json: JSONValue {
        [
            "attempts": .int(attempts), "initialDelay": .double(initialDelay.seconds),
            "maxDelay": .double(maxDelay.seconds), "multiplier": .double(multiplier),
        ]
    }

    /// Reads ``json``; nil when `json` is not a policy.
    package init?(json: JSONValue) {
        guard let attempts = json["attempts"]?.intValue, attempts >= 1,
            let initialDelay = json["initialDelay"].flatMap(TimeSpan.init(json:)),
            let maxDelay = json["maxDelay"].flatMap(TimeSpan.init(json:)),
            let multiplier = json["multiplier"]?.doubleValue
        else { return nil }
        self.init(attempts: attempts, initialDelay: initialDelay, maxDelay: maxDelay, multiplier: multiplier)
    }
}
