import Foundation
import Logging
import PostgresNIO
import TestSupport
import Testing

@testable import SharedBatch

/// The connections a process keeps to its server, against a real PostgreSQL: a connection that may be broken is
/// never lent again, and one that stayed idle is checked before use.
@Suite struct ServerConnectionsTests {
    /// Connections to `server` (at most 2), its first one opened, with `run()` running until the result is closed.
    static func connections(
        to server: PostgresServer, checkAfter: Duration = .seconds(30)
    ) async throws -> (ServerConnections, Task<Void, Never>) {
        var logger = Logger(label: "test.connections")
        logger.logLevel = .critical
        let address = try DatabaseAddress(server.url, environment: [:])
        let configuration = try address.connectionConfiguration(connectTimeout: .seconds(5))
        let first = try await PostgresConnection.connect(configuration: configuration, id: -1, logger: logger)
        let connections = ServerConnections(
            first: first, configuration: configuration, maximum: 2, idleLimit: .seconds(10), checkAfter: checkAfter,
            logger: logger)
        return (connections, Task { await connections.run() })
    }

    static func backend(_ connections: ServerConnections) async throws -> Int32 {
        try await connections.withConnection { connection in
            var pid: Int32 = 0
            let rows = try await connection.query("SELECT pg_backend_pid()", logger: Logger(label: "t"))
            for try await value in rows.decode(Int32.self) { pid = value }
            return pid
        }
    }

    /// A session the server ended (pg_terminate_backend: a FATAL 57P01 before the socket closes) and an attempt given
    /// up while its statement ran (closed by ``Attempts`` from outside the event loop): the very next operation runs
    /// on its first try, on another backend. Several rounds, since each case races the socket's close.
    @Test func aConnectionThatMayBeBrokenIsNotLentAgain() async throws {
        let server = try await PostgresServer.start()
        let (connections, running) = try await Self.connections(to: server)
        defer { running.cancel() }
        let attempts = Attempts()
        for round in 1...5 {
            let terminated = try await Self.backend(connections)
            await #expect(throws: PSQLError.self) {
                try await connections.withConnection { connection in
                    let terminate: PostgresQuery = "SELECT pg_terminate_backend(pg_backend_pid())"
                    return try await connection.query(terminate, logger: Logger(label: "t")).collect()
                }
            }
            let next = try await Self.backend(connections)
            #expect(next != terminated, "round \(round): the terminated backend was lent again")

            let abandoned = Task {
                try await connections.withConnection { connection in
                    try await attempts.run(
                        { connection in
                            try await connection.query(
                                PostgresQuery(unsafeSQL: "SELECT pg_sleep(60.\(round))"), logger: Logger(label: "t")
                            ).collect()
                        }, on: connection)
                }
            }
            try await server.waitForActive("SELECT pg_sleep(60.\(round))")
            abandoned.cancel()
            let outcome = await abandoned.result
            #expect(throws: AttemptAbandoned.self) { try outcome.get() }
            let after = try await Self.backend(connections)
            #expect(after != next, "round \(round): the abandoned connection was lent again")
        }
    }

    /// A connection idle for longer than `checkAfter` whose backend no longer answers (stopped with SIGSTOP, as a
    /// network that dropped the flow silently would leave it) is dropped after its `SELECT 1` check, and the
    /// operation runs on a new connection instead of waiting forever.
    @Test func anIdleConnectionThatDoesNotAnswerIsReplaced() async throws {
        let server = try await PostgresServer.start()
        let (connections, running) = try await Self.connections(to: server, checkAfter: .zero)
        defer { running.cancel() }
        let stopped = try await Self.backend(connections)
        #expect(kill(stopped, SIGSTOP) == 0)
        defer { kill(stopped, SIGCONT) }
        let next = try await withThrowingTaskGroup(of: Int32?.self) { group in
            group.addTask { try await Self.backend(connections) }
            group.addTask {
                // A bound for the case where the check is missing, not a wait on the way to success.
                try await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = try await group.next() ?? nil
            kill(stopped, SIGCONT)
            group.cancelAll()
            return first
        }
        #expect(next != nil, "the operation hung on the stopped backend")
        #expect(next != stopped)
    }
}

extension PostgresServer {
    /// Waits until a session runs `query`.
    fileprivate func waitForActive(_ query: String) async throws {
        try await waitUntil("a session runs \(query)", limit: .seconds(60)) {
            try await psql("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query = '\(query)'")
                != "0"
        }
    }
}
