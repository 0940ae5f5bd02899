import HTTPTypes
import NIOConcurrencyHelpers
import StageKit

/// Decides, request by request, which faults to inject. Deterministic: the decisions follow from
/// the seed and the order in which requests arrive.
final class FaultInjector: Sendable {
    private struct State {
        var faults: SandboxFaults
        var random: SplitMix64
    }

    private let state: NIOLockedValueBox<State>

    init(_ faults: SandboxFaults) {
        self.state = NIOLockedValueBox(State(faults: faults, random: SplitMix64(seed: faults.seed)))
    }

    var faults: SandboxFaults {
        self.state.withLockedValue { $0.faults }
    }

    /// Replaces the faults and restarts the generator from their seed.
    func replace(_ faults: SandboxFaults) {
        self.state.withLockedValue { $0 = State(faults: faults, random: SplitMix64(seed: faults.seed)) }
    }

    /// Waits the `latency` fault, before a request is processed.
    func delayAnswer() async throws {
        try await Self.wait(seconds: self.faults.latency)
    }

    /// Waits the `createDelay` fault, between making an object and answering the request that asked for it.
    func delayCreateAnswer() async throws {
        try await Self.wait(seconds: self.faults.createDelay)
    }

    private static func wait(seconds: Double) async throws {
        if seconds > 0 {
            try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
        }
    }

    /// An error to answer instead of processing the request, or `nil`.
    func injectedError() -> (status: HTTPResponse.Status, retryAfter: Bool)? {
        self.state.withLockedValue { state in
            guard state.faults.errorRate > 0 else { return nil }
            guard state.random.nextUnit() < state.faults.errorRate else { return nil }
            switch state.random.next() % 3 {
            case 0: return (.internalServerError, false)
            case 1: return (.serviceUnavailable, true)
            default: return (.tooManyRequests, true)
            }
        }
    }

    /// How many body bytes to read before cutting this upload request's connection, or `nil`.
    func dropLimit() -> Int64? {
        self.state.withLockedValue { state in
            guard let limit = state.faults.dropAfterBytes else { return nil }
            guard state.faults.dropRate >= 1 || state.random.nextUnit() < state.faults.dropRate else { return nil }
            return max(0, limit)
        }
    }
}

/// SplitMix64: a tiny, well-distributed generator that is reproducible from its seed.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var value = self.state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A uniform value in `0..<1`.
    mutating func nextUnit() -> Double {
        Double(self.next() >> 11) / Double(1 << 53)
    }
}
