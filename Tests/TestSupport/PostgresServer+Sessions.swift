public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Sessions of a test's own beside the ones under test: a transaction left open, a connection taken, the other
/// sessions ended by force, TLS turned on.
extension PostgresServer {
    /// Opens a session in `database` that begins a transaction, takes a transaction id, and stays idle in it until
    /// ``HeldTransaction/end()`` (or the test process ends): it holds the xmin horizon, so no row deleted or
    /// updated after it began can be vacuumed away. Returns once the server shows it idle in transaction.
    public func holdTransaction(database: String) async throws -> HeldSession {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tools.binary("psql"))
        process.arguments = [
            "-X", "-q", "-At", "-h", "127.0.0.1", "-p", String(port), "-U", "pipeline", "-d", database,
            "-v", "ON_ERROR_STOP=1",
        ]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let held = HeldSession(process: process, input: input.fileHandleForWriting)
        try input.fileHandleForWriting.write(
            contentsOf: Data("SET application_name = 'held-transaction'; BEGIN; SELECT txid_current();\n".utf8))
        try await waitUntil("the held transaction is idle in transaction") {
            let state = try? await psql(
                """
                SELECT count(*) FROM pg_stat_activity WHERE application_name = 'held-transaction'
                    AND state = 'idle in transaction' AND backend_xid IS NOT NULL
                """)
            return state == "1"
        }
        return held
    }

    /// Opens a session in `database` that stays idle until ``HeldSession/end()``: it takes one of the server's
    /// connections, as another application would. Returns once it is connected; fails when the server refused it.
    public func openSession(database: String) async throws -> HeldSession {
        let connected = folder.appendingPathComponent("session-\(UUID().uuidString).connected")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tools.binary("psql"))
        process.arguments = ["-X", "-q", "-h", "127.0.0.1", "-p", String(port), "-U", "pipeline", "-d", database]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let held = HeldSession(process: process, input: input.fileHandleForWriting)
        // psql reads its input once connected: the file appears when the session holds its connection.
        try input.fileHandleForWriting.write(contentsOf: Data("\\! touch \(connected.path)\n".utf8))
        try await waitUntil("a session of database \(database) is connected") {
            FileManager.default.fileExists(atPath: connected.path) || !held.isRunning
        }
        guard FileManager.default.fileExists(atPath: connected.path) else {
            throw PostgresServerError(message: "psql could not open a session of \(database)", logFile: logFile)
        }
        return held
    }

    /// Ends every session of `database` but the caller's (`pg_terminate_backend`), as an administrator or a
    /// failover would; returns how many it ended.
    @discardableResult
    public func terminateSessions(of database: String) async throws -> Int {
        let ended = try await psql(
            """
            SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
            WHERE datname = '\(database)' AND pid <> pg_backend_pid()
            """)
        return Int(ended) ?? 0
    }

    /// Restarts the server with TLS on, serving `certificate` with `key` (PEM files, copied into the server's
    /// folder and given to its user, as the server requires of a key). Clients may still connect without TLS.
    public func restartWithTLS(certificate: URL, key: URL) async throws {
        let tls = folder.appendingPathComponent("tls")
        try? FileManager.default.removeItem(at: tls)
        try FileManager.default.createDirectory(at: tls, withIntermediateDirectories: true)
        let copies = [("server.crt", certificate), ("server.key", key)].map { name, source in
            (tls.appendingPathComponent(name), source)
        }
        for (copy, source) in copies {
            try FileManager.default.copyItem(at: source, to: copy)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: copy.path)
        }
        if let account = tools.account {
            for path in [tls.path] + copies.map(\.0.path) where chown(path, account.uid, account.gid) != 0 {
                throw PostgresServerError(
                    message: "cannot give \(path) to \(account.name): \(String(cString: strerror(errno)))",
                    logFile: logFile)
            }
        }
        try await restart(settings: [
            "ssl=on", "ssl_cert_file=\(copies[0].0.path)", "ssl_key_file=\(copies[1].0.path)",
        ])
    }
}

/// A session of a test's own, idle (in a transaction, from ``PostgresServer/holdTransaction(database:)``) until it
/// ends.
public final class HeldSession: @unchecked Sendable {
    private let process: Process
    private let input: FileHandle

    init(process: Process, input: FileHandle) {
        self.process = process
        self.input = input
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Whether psql still runs (it ends when the server refuses the session).
    var isRunning: Bool { process.isRunning }

    /// Rolls its transaction back, if it has one, and ends the session.
    public func end() async {
        try? input.write(contentsOf: Data("ROLLBACK;\n\\q\n".utf8))
        try? input.close()
        let process = self.process
        _ = await Task.detached { waitForExit(of: process) }.value
    }
}
