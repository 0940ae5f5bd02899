import Foundation
import NIOConcurrencyHelpers

/// A condition that did not become true within the safety limit of ``waitUntil(_:limit:_:)``.
public struct WaitTimedOut: Error, CustomStringConvertible {
    /// What was waited for.
    public var what: String
    /// How long.
    public var limit: Duration

    public var description: String { "\(what) did not happen within \(limit)" }

    /// A timeout of waiting for `what` for `limit`.
    public init(what: String, limit: Duration) {
        (self.what, self.limit) = (what, limit)
    }
}

/// Waits until `condition` is true, checking it every `interval` (10 ms; longer for a costly check). Tests wait
/// for what they need (bytes received, a checkpoint written, an event seen), never for a fixed time; `limit` is
/// only a safety net so that a broken test fails rather than hangs, not a bound on how fast the code must be.
public func waitUntil(
    _ what: String, limit: Duration = .seconds(120), every interval: Duration = .milliseconds(10),
    _ condition: @Sendable () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimedOut(what: what, limit: limit) }
        try await Task.sleep(for: interval)
    }
}

/// Random moments and choices that a failing test can replay: the seed comes from `TEST_SEED` when it is
/// set, else from the system, and is printed with the test's name, so `TEST_SEED=… swift test --filter …`
/// repeats the same moments.
public final class SeededRandom: Sendable {
    /// The seed of this generator.
    public let seed: UInt64
    private let state: NIOLockedValueBox<UInt64>

    /// A generator for `test`; prints its seed.
    public init(_ test: String) {
        let seed =
            ProcessInfo.processInfo.environment["TEST_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        self.seed = seed
        self.state = NIOLockedValueBox(seed)
        print("\(test): TEST_SEED=\(seed)")
    }

    /// A generator for `test` that always starts from `seed`: a case some seed once found, kept as a test of its
    /// own.
    public init(_ test: String, pinned seed: UInt64) {
        self.seed = seed
        self.state = NIOLockedValueBox(seed)
        print("\(test): seed \(seed) (pinned)")
    }

    /// The next number (SplitMix64).
    public func next() -> UInt64 {
        state.withLockedValue { state in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A number in `range`.
    public func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    /// A fraction in 0..<1.
    public func fraction() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}
