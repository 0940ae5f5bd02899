import Logging
import PostgresNIO

/// The connections one process keeps to the batch's database server: opened as operations need them, up to
/// ``maximum``, each lent to one operation at a time.
///
/// Made for a server shared by many workers whose `max_connections` may be lower than all of them would open. An
/// idle connection is always lent at once (most recently used first); a new one is opened only when none is idle.
/// When an opening fails (the server is full, "too many clients" (53300); starting up; unreachable) while the process
/// holds connections, the operation waits for one of those rather than failing, and no other opening is tried for a
/// while (from 1 s, doubling up to 30 s): the process goes on at the size the server lets it have. When it holds
/// none, the operation gets the error and retries it (``BatchDatabase``). Connections idle for ``idleLimit`` are
/// closed, all but one, and sooner (after 1 s) once an opening was refused, so that the slots of a full server go
/// to the workers that have none. A connection idle for longer than ``checkAfter`` is checked with `SELECT 1` before
/// it is lent, and one that failed an operation in a way that may have left it broken is closed rather than lent
/// again (``isReusable(after:)``). PostgresNIO's pool does otherwise: once an opening failed it queues every request,
/// even while it holds idle connections, until an opening succeeds, so workers that each hold part of a full
/// server's slots stall one another.
actor ServerConnections {
    /// Thrown to operations once ``run()`` has ended.
    struct Closed: Error, CustomStringConvertible {
        var description: String { "the connections to the server were closed" }
    }

    /// What a waiting operation is given.
    private enum Grant {
        /// A connection that another operation gave back, and whether it must be checked before use.
        case connection(PostgresConnection, stale: Bool)
        /// The right to open a connection of its own (counted in ``opening``).
        case open
    }

    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Grant, any Error>
    }

    /// The most connections open at once.
    let maximum: Int
    /// How long a connection stays open unused (beyond the one kept).
    let idleLimit: Duration
    /// How long a connection may stay idle before it is checked with `SELECT 1` when it is lent.
    let checkAfter: Duration
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    /// Open connections nobody uses, the least recently used first, with the moment each was given back.
    private var idle: [(connection: PostgresConnection, since: ContinuousClock.Instant)] = []
    private var lent = 0
    private var opening = 0
    private var waiters: [Waiter] = []
    private var lastID = 0
    /// Until when no connection is opened beside those held, after an opening failed; nil once one succeeded.
    private var refusedUntil: ContinuousClock.Instant?
    private var pause = Duration.seconds(1)
    private var closed = false

    /// Connections to the server of `configuration`, starting with `first` (idle).
    init(
        first: PostgresConnection, configuration: PostgresConnection.Configuration, maximum: Int, idleLimit: Duration,
        checkAfter: Duration = .seconds(30), logger: Logger
    ) {
        self.checkAfter = checkAfter
        idle = [(first, .now)]
        self.configuration = configuration
        self.maximum = maximum
        self.idleLimit = idleLimit
        self.logger = logger
    }

    /// Runs `body` on a connection lent for the time it runs. A connection that closed meanwhile, that does not
    /// answer after a long idle time, or that `body` failed in a way that may have broken it is not lent again.
    nonisolated func withConnection<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        var (connection, stale) = try await lease()
        while stale, !(await Self.answers(connection, logger: logger)) {
            await giveBack(connection, reusable: false)
            (connection, stale) = try await lease()
        }
        do {
            // A lease granted just as the task was cancelled goes back unused, and healthy.
            try Task.checkCancellation()
        } catch {
            await giveBack(connection, reusable: true)
            throw error
        }
        do {
            let value = try await body(connection)
            await giveBack(connection, reusable: true)
            return value
        } catch {
            await giveBack(connection, reusable: Self.isReusable(after: error))
            throw error
        }
    }

    /// Closes the idle connections that outlived their limit, once a second, until the task is cancelled; then
    /// closes every connection (those lent when they are given back) and fails the operations still waiting.
    func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            closeIdle()
        }
        closed = true
        for waiter in waiters { waiter.continuation.resume(throwing: Closed()) }
        waiters = []
        let closing = idle
        idle = []
        for (connection, _) in closing { try? await connection.close() }
    }

    /// Lends a connection, and says whether it was idle long enough to be checked before use.
    private func lease() async throws -> (PostgresConnection, stale: Bool) {
        guard !closed else { throw Closed() }
        if let taken = takeIdle() { return taken }
        if mayOpen {
            opening += 1
            return try await open()
        }
        return try await wait()
    }

    /// Whether an operation that finds no idle connection may open one: below the maximum, and either none is held
    /// or opened, or no opening failed lately.
    private var mayOpen: Bool {
        let held = lent + opening
        guard held < maximum else { return false }
        return held == 0 || refusedUntil.map { ContinuousClock.now >= $0 } ?? true
    }

    /// Opens a connection (already counted in ``opening``) and lends it; when that fails and the process holds
    /// connections, waits for one of them.
    private func open() async throws -> (PostgresConnection, stale: Bool) {
        lastID += 1
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: lastID, logger: logger)
        } catch {
            opening -= 1
            guard !closed else { throw Closed() }
            guard !(error is CancellationError), lent + idle.count > 0 else {
                serveWaiters()
                throw error
            }
            refusedUntil = .now + pause
            pause = min(pause * 2, .seconds(30))
            return try await wait()
        }
        opening -= 1
        guard !closed else {
            try? await connection.close()
            throw Closed()
        }
        refusedUntil = nil
        pause = .seconds(1)
        lent += 1
        return (connection, false)
    }

    /// Waits in line for a connection given back (or for the right to open one).
    private func wait() async throws -> (PostgresConnection, stale: Bool) {
        lastID += 1
        let id = lastID
        let grant: Grant = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Grant, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else if closed {
                    continuation.resume(throwing: Closed())
                } else {
                    waiters.append(Waiter(id: id, continuation: continuation))
                    serveWaiters()
                }
            }
        } onCancel: {
            Task { await self.stopWaiting(id) }
        }
        switch grant {
        case .connection(let connection, let stale): return (connection, stale)
        case .open:
            guard !Task.isCancelled else {
                opening -= 1
                serveWaiters()
                throw CancellationError()
            }
            return try await open()
        }
    }

    private func stopWaiting(_ id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    /// Takes the most recently used idle connection that is still open, and lends it; says whether it was idle for
    /// longer than ``checkAfter``.
    private func takeIdle() -> (PostgresConnection, stale: Bool)? {
        while let entry = idle.popLast() {
            if !entry.connection.isClosed {
                lent += 1
                return (entry.connection, ContinuousClock.now - entry.since > checkAfter)
            }
        }
        return nil
    }

    /// Takes back a lent connection: idle again when `reusable`, closed otherwise (or once ``run()`` has ended).
    private func giveBack(_ connection: PostgresConnection, reusable: Bool) {
        lent -= 1
        if closed || !reusable {
            Self.close(connection)
        } else if !connection.isClosed {
            idle.append((connection, .now))
        }
        serveWaiters()
    }

    /// Gives the waiting operations the idle connections, or the right to open one while that is allowed (always
    /// when nothing held or being opened could come back to them).
    private func serveWaiters() {
        while let waiter = waiters.first {
            if let (connection, stale) = takeIdle() {
                waiters.removeFirst()
                waiter.continuation.resume(returning: .connection(connection, stale: stale))
            } else if mayOpen {
                waiters.removeFirst()
                opening += 1
                waiter.continuation.resume(returning: .open)
            } else {
                return
            }
        }
    }

    /// Closes the connections idle for longer than their limit (1 s while openings are refused), keeping one.
    private func closeIdle() {
        let limit = refusedUntil == nil ? idleLimit : .seconds(1)
        let now = ContinuousClock.now
        idle.removeAll { $0.connection.isClosed }
        while let oldest = idle.first, now - oldest.since > limit, idle.count + lent > 1 {
            idle.removeFirst()
            Self.close(oldest.connection)
        }
    }

    /// Closes `connection` without waiting; it is kept alive until it is closed.
    static func close(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }
}
