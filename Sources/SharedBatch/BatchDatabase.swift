import Foundation
import Logging
public import PipelineKit
import PostgresNIO

/// The PostgreSQL database that workers share a batch through: its connections (``ServerConnections``) with the
/// schema in place.
///
/// Every operation retries while the server cannot be reached (a restart, a failover) or has no free connection ("too
/// many clients"), with a backoff from 50 ms up to 2 s, for up to ``patience`` (or a shorter patience of its own: a
/// heartbeat gives up before its lease runs out); then it fails with a ``StateError``. The patience bounds the whole
/// operation, waiting for a connection and for answers included, and an attempt whose connection closes under it is
/// retried on a new one (``Attempts``). Each operation is one transaction. A transaction whose commit was sent when
/// the connection died (or that was given up) may have committed; its retry then finds the state it left. Writes are
/// upserts or updates to given values, so that changes nothing, with two exceptions: a claim (the first one's item
/// stays leased to the worker, which does not know it, until the lease runs out and another worker takes it) and a
/// new version (the version number skips one).
public final class BatchDatabase: Sendable {
    /// The database, for messages (without its password).
    public let location: String
    /// How long an operation waits for an unreachable server before it fails.
    public let patience: Duration
    /// The patience of operations unless a command gives its own: long enough for a server's restart.
    public static let defaultPatience = Duration.seconds(120)
    /// The most connections a process opens to the server, at its busiest moments.
    static let maximumConnections = 8
    let connections: ServerConnections
    let logger: Logger
    private let attempts = Attempts()
    private let running: Task<Void, Never>

    /// What opening a database does when it holds no batch.
    public enum Opening: Sendable {
        /// Creates the batch's tables: the commands that start a batch or work on it (`submit`, `worker`).
        case creatingBatch
        /// Creates nothing and fails with ``StateError/Code-swift.struct/missing`` when the database holds no batch:
        /// the commands that read a batch or change its items (`status`, `serve`, `cancel`, `forget`), so that a typo
        /// in a database's name does not leave a batch's tables in another application's database.
        case existingBatch
    }

    /// Connects to the database at `url` (`postgres://user[:password]@host[:port]/database[?sslmode=…]`) and
    /// upgrades the batch's schema, creating it when `opening` says so. A password can also come from `PGPASSWORD`.
    ///
    /// The first connection is made before anything else, so that a mistake in the address fails at once with the
    /// server's reason (a wrong password, user or database) and what to change, and a server that cannot be reached
    /// fails after `startPatience` with the reason of the last attempt, rather than after a whole ``patience`` with
    /// the pool's.
    public init(
        url: String, opening: Opening = .creatingBatch, patience: Duration = defaultPatience,
        startPatience: Duration = .seconds(10)
    ) async throws(StateError) {
        let address = try DatabaseAddress(url, environment: ProcessInfo.processInfo.environment)
        location = address.description
        self.patience = patience
        var logger = Logger(label: "pipeline.database")
        logger.logLevel = .critical
        self.logger = logger
        let configuration = try address.connectionConfiguration(connectTimeout: .seconds(5))
        let first = try await Self.firstConnection(
            to: address, configuration: configuration, patience: startPatience, logger: logger)
        let connections = ServerConnections(
            first: first, configuration: configuration, maximum: Self.maximumConnections, idleLimit: .seconds(10),
            logger: logger)
        self.connections = connections
        running = Task { await connections.run() }
        do {
            try await BatchSchema.migrate(self, creating: opening == .creatingBatch)
        } catch {
            await close()
            throw error
        }
    }

    /// Connects once, retrying while the server cannot be reached or has no free connection (it may be starting, or
    /// full) for up to `patience`; a refusal by the server (authentication, a database that does not exist) fails at
    /// once. The connection is the first of the process's: a full server's slot, once had, is kept.
    private static func firstConnection(
        to address: DatabaseAddress, configuration: PostgresConnection.Configuration, patience: Duration,
        logger: Logger
    ) async throws(StateError) -> PostgresConnection {
        let clock = ContinuousClock()
        let deadline = clock.now + patience
        var delay = Duration.milliseconds(50)
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await PostgresConnection.connect(configuration: configuration, id: -attempt, logger: logger)
            } catch {
                // A refused handshake is not retried here: the address's first use fails at once.
                let transient = isTransient(error) && !isRefusedHandshake(error)
                guard transient, clock.now + delay < deadline else {
                    let suffix = transient ? " (gave up after \(patience.components.seconds) s)" : ""
                    let remedy = Self.remedy(for: error, address: address).map { ": \($0)" } ?? ""
                    throw StateError(
                        code: .io,
                        message: "cannot connect to the database \(address): \(reason(of: error))\(suffix)\(remedy)",
                        path: address.description)
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
    }

    /// Closes the connections; later operations fail.
    public func close() async {
        running.cancel()
        await running.value
    }

    /// Runs `body` in a transaction, retrying it while the server is unreachable or the transaction lost a
    /// serialization race. `doing` names the operation for the error message.
    func transaction<T: Sendable>(
        _ doing: String, patience: Duration? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(StateError) -> T {
        let logger = self.logger
        return try await retrying(doing, patience: patience) { connection in
            try await connection.withTransaction(logger: logger) { connection in try await body(connection) }
        }
    }

    /// Runs one statement (its own transaction) and returns its rows, retrying as ``transaction(_:patience:_:)``
    /// does.
    @discardableResult
    func rows(_ doing: String, patience: Duration? = nil, _ query: PostgresQuery) async throws(StateError)
        -> [PostgresRow]
    {
        let logger = self.logger
        return try await retrying(doing, patience: patience) { connection in
            var rows: [PostgresRow] = []
            for try await row in try await connection.query(query, logger: logger) { rows.append(row) }
            return rows
        }
    }

    /// Runs `body` while this process holds the session advisory lock (`key`, `subkey`) on a connection lent for
    /// the whole time. The lock is released when `body` ends, or by the server when the process dies (`kill -9`)
    /// and its connection with it: other sessions see in `pg_locks` whether its holder still lives.
    func holdingLock<T: Sendable>(
        _ key: Int32, _ subkey: Int32, doing: String, _ body: @escaping @Sendable () async throws(StateError) -> T
    ) async throws(StateError) -> T {
        let logger = self.logger
        let outcome: Result<T, StateError>
        do {
            outcome = try await connections.withConnection { connection in
                try await connection.query("SELECT pg_advisory_lock(\(key), \(subkey))", logger: logger)
                let outcome: Result<T, StateError>
                do throws(StateError) { outcome = .success(try await body()) } catch { outcome = .failure(error) }
                // A failed unlock leaves the lock on a broken connection (gone with it) or until the process ends.
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(key), \(subkey))", logger: logger)
                return outcome
            }
        } catch {
            throw stateError(Self.cause(of: error), doing: doing, waited: nil)
        }
        return try outcome.get()
    }

    /// Decodes what an operation read; a value that does not decode is a damaged state.
    func decoding<T>(_ doing: String, _ body: () throws -> T) throws(StateError) -> T {
        do {
            return try body()
        } catch {
            throw StateError(
                code: .corrupt, message: "cannot \(doing) in the database \(location): \(error)", path: location)
        }
    }

    /// Runs `body` on a connection of the process until it succeeds, fails for good, or the patience runs out. It
    /// runs in a task of its own, which the caller's cancellation does not reach: an interrupted item's last
    /// checkpoint is still written.
    private func retrying<T: Sendable>(
        _ doing: String, patience: Duration?, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(StateError) -> T {
        let patience = patience ?? self.patience
        let (connections, attempts) = (self.connections, self.attempts)
        let operation = Task { () async -> Result<T, StateError> in
            let clock = ContinuousClock()
            let deadline = clock.now + patience
            var delay = Duration.milliseconds(50)
            while true {
                do {
                    return .success(try await Self.attempt(body, on: connections, through: attempts, until: deadline))
                } catch {
                    let error = Self.cause(of: error)
                    if let error = error as? StateError { return .failure(error) }
                    let transient = Self.isTransient(error)
                    guard transient, clock.now + delay < deadline else {
                        return .failure(stateError(error, doing: doing, waited: transient ? patience : nil))
                    }
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, .seconds(2))
                }
            }
        }
        return try await operation.value.get()
    }

    /// One attempt: leases a connection and runs `body` on it, giving up at `deadline` whether it is still
    /// waiting for a connection or for the server's answer.
    private static func attempt<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T, on connections: ServerConnections,
        through attempts: Attempts, until deadline: ContinuousClock.Instant
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask {
                try await connections.withConnection { connection in try await attempts.run(body, on: connection) }
            }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                throw AttemptAbandoned.noAnswer
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw AttemptAbandoned.noAnswer }
            return first
        }
    }

    /// The error that made a transaction fail (PostgresNIO wraps it with the transaction's steps).
    static func cause(of error: any Error) -> any Error {
        guard let failed = error as? PostgresTransactionError else { return error }
        return failed.closureError ?? failed.commitError ?? failed.beginError ?? failed.rollbackError ?? error
    }

    /// Whether an error goes away by itself: the connection is gone or cannot be made, the server is full, shutting
    /// down or starting, or a transaction lost a serialization race or a deadlock.
    static func isTransient(_ error: any Error) -> Bool {
        // An attempt given up (its connection closed, or no answer came) may succeed on another connection.
        if error is AttemptAbandoned { return true }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
            return true
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            // 08: connection exception; 53300: too many connections (the server is full); 57P01-03: admin/crash
            // shutdown, cannot connect now; 40001, 40P01: serialization failure, deadlock.
            return state.hasPrefix("08") || ["53300", "57P01", "57P02", "57P03", "40001", "40P01"].contains(state)
        default:
            return false
        }
    }

    private func stateError(_ error: any Error, doing: String, waited: Duration?) -> StateError {
        let detail = Self.reason(of: error)
        if Self.isMissingTable(error) {
            // The batch's tables went away under a command that found them at its start (dropped, or the database
            // emptied): what remains is no batch, not a damaged one.
            return StateError(
                code: .missing,
                message: "no batch in the database \(location) any more (\(detail)): \(BatchSchema.submitHint)",
                path: location)
        }
        let suffix = waited.map { " (gave up after \($0.components.seconds) s)" } ?? ""
        return StateError(
            code: .io, message: "cannot \(doing) in the database \(location): \(detail)\(suffix)", path: location)
    }
}

extension Duration {
    /// The duration in seconds, for SQL intervals.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
