import NIOConcurrencyHelpers
import StageKit

/// Carries the bound port from Hummingbird's `onServerRunning` callback to ``SandboxServer/start``,
/// or the error that kept the server from listening. The first outcome wins.
final class ListeningSignal: Sendable {
    private struct State {
        var outcome: Result<Int, any Error>?
        var waiter: CheckedContinuation<Int, any Error>?
    }

    private let state = NIOLockedValueBox(State())

    func succeed(port: Int) {
        self.settle(.success(port))
    }

    func fail(_ error: any Error) {
        self.settle(.failure(error))
    }

    func wait() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let ready = self.state.withLockedValue { state -> Result<Int, any Error>? in
                if let outcome = state.outcome { return outcome }
                state.waiter = continuation
                return nil
            }
            if let ready {
                continuation.resume(with: ready)
            }
        }
    }

    private func settle(_ outcome: Result<Int, any Error>) {
        let waiter = self.state.withLockedValue { state -> CheckedContinuation<Int, any Error>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: outcome)
    }
}
