import Logging
import PostgresNIO

extension ServerConnections {
    /// How long a liveness check (`SELECT 1`) of a long-idle connection may take before the connection is dropped.
    static let checkPatience = Duration.seconds(5)

    /// Whether a connection whose operation failed with `error` may be lent again: not when the operation was given
    /// up or cancelled (its statement may still run), when the driver failed (the connection is broken), when the
    /// server ends the session (SQLSTATE class 08, 57P01–57P03, or a FATAL or PANIC report), or when a transaction's
    /// rollback failed (it may still be open). An error of the operation itself (a plain ERROR, a value that did not
    /// decode) leaves the connection as good as before. This is the rule of pgxpool's `Release`.
    static func isReusable(after error: any Error) -> Bool {
        switch error {
        case is AttemptAbandoned, is CancellationError:
            return false
        case let failed as PostgresTransactionError:
            guard failed.rollbackError == nil else { return false }
            return [failed.beginError, failed.closureError, failed.commitError].allSatisfy { step in
                step.map(isReusable(after:)) ?? true
            }
        case let error as PSQLError:
            guard error.code == .server else { return false }
            let state = error.serverInfo?[.sqlState] ?? ""
            let severity = error.serverInfo?[.severity] ?? ""
            return !state.hasPrefix("08") && !["57P01", "57P02", "57P03"].contains(state)
                && !["FATAL", "PANIC"].contains(severity)
        default:
            return true
        }
    }

    /// Whether `connection` answers `SELECT 1` within ``checkPatience``; one that does not is closed, so that a
    /// statement stuck on a connection the network dropped silently ends.
    static func answers(_ connection: PostgresConnection, logger: Logger) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    _ = try await connection.query("SELECT 1", logger: logger).collect()
                    return true
                } catch {
                    return false
                }
            }
            group.addTask {
                try? await Task.sleep(for: checkPatience)
                return false
            }
            let answered = await group.next() ?? false
            if !answered { close(connection) }
            group.cancelAll()
            return answered
        }
    }
}
