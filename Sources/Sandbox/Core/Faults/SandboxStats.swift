import NIOConcurrencyHelpers
import StageKit

/// Counters for `GET /sandbox/stats`: how much traffic the sandbox saw, so tests can check that a
/// client re-sent no more than it had to.
final class SandboxStats: Sendable {
    private struct Counters {
        var requests: Int64 = 0
        var bodyBytes: Int64 = 0
        var injectedErrors: Int64 = 0
        var droppedConnections: Int64 = 0
    }

    private let counters = NIOLockedValueBox(Counters())

    func countRequest() {
        self.counters.withLockedValue { $0.requests += 1 }
    }

    /// Bytes read from upload bodies (tus `PATCH`, `PUT`), including bodies that were cut.
    func countBodyBytes(_ count: Int) {
        self.counters.withLockedValue { $0.bodyBytes += Int64(count) }
    }

    func countInjectedError() {
        self.counters.withLockedValue { $0.injectedErrors += 1 }
    }

    func countDroppedConnection() {
        self.counters.withLockedValue { $0.droppedConnections += 1 }
    }

    var snapshot: (requests: Int64, bodyBytes: Int64, injectedErrors: Int64, droppedConnections: Int64) {
        self.counters.withLockedValue { ($0.requests, $0.bodyBytes, $0.injectedErrors, $0.droppedConnections) }
    }
}
