import NIOConcurrencyHelpers
import PostgresNIO

/// Runs attempts at database operations on leased connections, and gives an attempt up when its connection
/// closes under it or its task is cancelled: a statement in flight when the server went away is not always failed
/// by the driver, and must not hold the operation forever.
///
/// Each connection is watched once, for as long as it lives, whatever number of attempts run on it.
final class Attempts: Sendable {
    /// For each watched connection, how to give up the attempt running on it now, if one is.
    private let running = NIOLockedValueBox<[PostgresConnection.ID: GiveUp?]>([:])

    /// Gives up one attempt.
    private typealias GiveUp = @Sendable (AttemptAbandoned) -> Void

    /// Runs `body` on `connection` (which the caller leased) until it ends, the connection closes, or the task is
    /// cancelled. A connection given up is closed, so that nothing it still runs (an open transaction) reaches
    /// the next user of the pool.
    func run<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T, on connection: PostgresConnection
    ) async throws -> T {
        let outcome = Outcome<T>()
        let work = Task {
            do {
                outcome.settle(.success(try await body(connection)))
            } catch {
                outcome.settle(.failure(error))
            }
        }
        watch(connection) { reason in outcome.settle(.failure(reason)) }
        let result = await withTaskCancellationHandler {
            await outcome.value
        } onCancel: {
            outcome.settle(.failure(AttemptAbandoned.noAnswer))
        }
        running.withLockedValue { running in
            // The attempt is over; a connection that closed meanwhile is no longer watched.
            if running[connection.id] != nil { running[connection.id] = .some(nil) }
        }
        if case .failure(let reason as AttemptAbandoned) = result {
            work.cancel()
            connection.close().whenComplete { _ in }
            throw reason
        }
        return try result.get()
    }

    /// Makes `giveUp` the way to end the attempt now running on `connection`; watches the connection's close the
    /// first time it is seen.
    private func watch(_ connection: PostgresConnection, giveUp: @escaping GiveUp) {
        let id = connection.id
        let firstSeen = running.withLockedValue { running in
            defer { running[id] = giveUp }
            return running[id] == nil
        }
        guard firstSeen else { return }
        connection.closeFuture.whenComplete { [self] _ in
            let current = running.withLockedValue { $0.removeValue(forKey: id) }
            current??(.connectionClosed)
        }
    }
}

/// Why an attempt at a database operation was given up before the driver answered.
enum AttemptAbandoned: Error, CustomStringConvertible {
    /// The connection closed while the operation ran on it (the server restarted, say).
    case connectionClosed
    /// The operation's patience ran out while it ran.
    case noAnswer

    var description: String {
        switch self {
        case .connectionClosed: "the connection closed while the operation ran"
        case .noAnswer: "no answer from the server"
        }
    }
}

/// The first result an attempt settles with; later ones are dropped.
private final class Outcome<T: Sendable>: Sendable {
    private struct State {
        var result: Result<T, any Error>?
        var waiter: CheckedContinuation<Result<T, any Error>, Never>?
    }

    private let state = NIOLockedValueBox(State())

    /// Settles the outcome, unless it is settled already.
    func settle(_ result: Result<T, any Error>) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Result<T, any Error>, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: result)
    }

    /// The result, once settled.
    var value: Result<T, any Error> {
        get async {
            await withCheckedContinuation { continuation in
                let settled = state.withLockedValue { state in
                    if state.result == nil { state.waiter = continuation }
                    return state.result
                }
                if let settled { continuation.resume(returning: settled) }
            }
        }
    }
}
