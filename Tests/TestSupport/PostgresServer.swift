public import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server of its own for tests: a fresh cluster in a temporary folder under /tmp, listening on a free
/// port of 127.0.0.1, with a database `pipeline` that the user `pipeline` owns and enters without a password. The
/// user ``passwordUser``, made by ``createPasswordUser(password:)``, must give its password (scram-sha-256).
///
/// The server binaries are found in `POSTGRES_BIN` alone when it is set, else in `/usr/lib/postgresql/<N>/bin` (15
/// preferred, any version accepted; Debian's `postgresql-15`, which `scripts/install-deps.sh` installs), else on
/// `PATH`. PostgreSQL refuses to run as root: under root (as in CI) the cluster belongs to, and the server runs as,
/// the `postgres` system user when there is one, else a system user `pipeline-test` made for it. The server runs
/// without fsync (`fsync` and `full_page_writes` off) but a commit waits for its WAL to be written (to the page
/// cache, which an immediate stop keeps): a restart or a crash of the server loses no commit, a machine's crash would.
///
/// The server stops, and its folder is removed, when the value goes away or the test process ends in any way (a
/// crash or kill -9 included): a watchdog child waits for the end of a pipe that only this process holds open.
/// ``stop()`` and ``restart()`` are meant to be called one at a time, not concurrently.
public final class PostgresServer: Sendable {
    /// The port on 127.0.0.1.
    public let port: Int
    /// The database `pipeline`: `postgres://pipeline@127.0.0.1:PORT/pipeline`.
    public let url: String
    /// The user that the server asks for a password, once ``createPasswordUser(password:)`` made it.
    public static let passwordUser = "pipeline_password"
    /// The server's log (appended to across restarts), for failure messages.
    public let logFile: URL
    /// The temporary folder of the cluster (`data`), its socket (`socket`) and the log.
    public let folder: URL

    let tools: PostgresTools
    private let running: NIOLockedValueBox<Bool>
    /// The write end of the watchdog's pipe; closing it stops the server and removes the folder.
    private let watchdog: Int32

    private init(port: Int, folder: URL, tools: PostgresTools, watchdog: Int32) {
        self.port = port
        self.url = "postgres://pipeline@127.0.0.1:\(port)/pipeline"
        self.logFile = folder.appendingPathComponent("server.log")
        self.folder = folder
        self.tools = tools
        self.running = NIOLockedValueBox(true)
        self.watchdog = watchdog
    }

    deinit {
        // The watchdog sees the end of its input, runs `pg_ctl stop -m immediate` and removes the folder.
        close(watchdog)
    }

    /// Makes a cluster (a copy of the test process's ``ClusterTemplate``, which holds the database `pipeline`),
    /// starts its server on a free port and waits until it accepts connections.
    public static func start() async throws -> PostgresServer {
        let tools = try await PostgresTools.find()
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("pipeline-pg-\(UUID().uuidString)")
        try makeFolders(folder, owner: tools.account)
        let data = folder.appendingPathComponent("data")
        let watchdog: Int32
        do {
            watchdog = try startWatchdog(
                folder: folder, stop: tools.serverCommand("pg_ctl", ["-D", data.path, "-m", "immediate", "-w", "stop"]))
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        let port: Int
        do {
            let template = try await ClusterTemplate.shared()
            let copied = await runTool("/bin/cp", ["-a", template.data.path, data.path])
            guard copied.status == 0 else {
                throw PostgresServerError(
                    message: "cannot copy the template cluster (exit status \(copied.status)): \(copied.stderr)",
                    logFile: nil)
            }
            port = try await startOnFreePort(tools: tools, folder: folder)
        } catch {
            close(watchdog)
            throw error
        }
        // From here on the value owns the server: when a step fails, its deinit has the watchdog clean up.
        return PostgresServer(port: port, folder: folder, tools: tools, watchdog: watchdog)
    }

    /// Makes a cluster in `folder`/data (`initdb`) with the password rule of ``passwordUser``, starts it, creates
    /// the database `pipeline` and stops it cleanly: what every server starts from (``ClusterTemplate``).
    static func makeCluster(in folder: URL, tools: PostgresTools) async throws {
        let data = folder.appendingPathComponent("data")
        let logFile = folder.appendingPathComponent("server.log")
        let initdb = await tools.runServerTool(
            "initdb", ["-D", data.path, "-U", "pipeline", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        guard initdb.status == 0 else {
            throw PostgresServerError(
                message: "initdb failed (exit status \(initdb.status)): \(initdb.text)\(initdb.stderr)",
                logFile: logFile)
        }
        try requirePassword(of: passwordUser, in: data)
        let port = try await startOnFreePort(tools: tools, folder: folder)
        let created = await runTool(
            tools.binary("createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "pipeline", "pipeline"])
        let stopped = await tools.runServerTool("pg_ctl", ["-D", data.path, "-m", "fast", "-w", "-t", "120", "stop"])
        guard created.status == 0, stopped.status == 0 else {
            throw PostgresServerError(
                message: "createdb pipeline (exit status \(created.status)) or pg_ctl stop (exit status "
                    + "\(stopped.status)) failed: \(created.stderr)\(stopped.text)\(stopped.stderr)",
                logFile: logFile)
        }
    }

    /// Starts the server on a free port and returns the port. A port is free when chosen but may be taken before
    /// the server binds it: then another one.
    private static func startOnFreePort(tools: PostgresTools, folder: URL) async throws -> Int {
        for _ in 1...5 {
            let port = try freeLoopbackPort()
            switch try await launch(tools: tools, folder: folder, port: port) {
            case .ready: return port
            case .portTaken: continue
            }
        }
        throw PostgresServerError(
            message: "five free ports in a row were taken before the server bound them",
            logFile: folder.appendingPathComponent("server.log"))
    }

    /// Creates the database `name` (ASCII letters, digits and `_`) and returns its URL, so that tests sharing one
    /// server keep apart from one another.
    public func createDatabase(_ name: String) async throws -> String {
        guard !name.isEmpty, name.utf8.count <= 63,
            name.unicodeScalars.allSatisfy({ $0.isASCII && ($0 == "_" || CharacterSet.alphanumerics.contains($0)) })
        else {
            throw PostgresServerError(
                message: "createDatabase: \"\(name)\" is not a database name of ASCII letters, digits and _",
                logFile: nil)
        }
        let created = await runTool(
            tools.binary("createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "pipeline", name])
        guard created.status == 0 else {
            throw PostgresServerError(
                message: "createdb \(name) failed (exit status \(created.status)): \(created.text)\(created.stderr)",
                logFile: logFile)
        }
        return "postgres://pipeline@127.0.0.1:\(port)/\(name)"
    }

    /// Makes the user ``passwordUser`` with `password` (a superuser, as `pipeline` is) and returns the URL of the
    /// database `pipeline` for it, without the password.
    public func createPasswordUser(password: String) async throws -> String {
        let quoted = password.replacingOccurrences(of: "'", with: "''")
        _ = try await psql("CREATE ROLE \(Self.passwordUser) LOGIN SUPERUSER PASSWORD '\(quoted)'")
        return "postgres://\(Self.passwordUser)@127.0.0.1:\(port)/pipeline"
    }

    /// Runs `sql` with `psql` as the user `pipeline` in `database` (by its name) and returns what it printed:
    /// rows unaligned, one a line, columns separated by `|`.
    public func psql(_ sql: String, database: String = "pipeline") async throws -> String {
        let done = await runTool(
            tools.binary("psql"),
            [
                "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port), "-U", "pipeline",
                "-d", database, "-c", sql,
            ])
        guard done.status == 0 else {
            throw PostgresServerError(
                message: "psql -c \(sql) failed (exit status \(done.status)): \(done.text)\(done.stderr)",
                logFile: logFile)
        }
        return done.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Creates a database of a name no other test uses and returns its URL.
    public func createDatabase() async throws -> String {
        try await createDatabase("test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())
    }

    /// Stops the server (`pg_ctl stop -m fast`: open sessions are ended, then a clean shutdown); does nothing when
    /// it is stopped already. The folder stays until the value goes away, so ``restart()`` can start it again.
    public func stop() async throws {
        guard running.withLockedValue({ $0 }) else { return }
        try await stopServer(mode: "fast")
    }

    /// Stops the server abruptly (`pg_ctl stop -m immediate`: no shutdown checkpoint, so the start that follows
    /// recovers from the WAL, as after a crash), starts it again on the same port and waits until it accepts
    /// connections. Starts it when it was stopped.
    /// With `settings` (such as `["max_connections=8"]`), the server runs with them until the next restart.
    public func restart(settings: [String] = []) async throws {
        if running.withLockedValue({ $0 }) {
            try await stopServer(mode: "immediate")
        }
        guard try await Self.launch(tools: tools, folder: folder, port: port, settings: settings) == .ready else {
            throw PostgresServerError(
                message: "restart: port \(port) was taken by another process while the server was stopped",
                logFile: logFile)
        }
        running.withLockedValue { $0 = true }
    }

    /// Stops the server abruptly (`pg_ctl stop -m immediate`, as a crash): every session ends without a goodbye, and
    /// the next ``restart(settings:)`` recovers from the WAL. Does nothing when it is stopped already.
    public func crash() async throws {
        guard running.withLockedValue({ $0 }) else { return }
        try await stopServer(mode: "immediate")
    }

    /// Runs `pg_ctl stop -m mode` and waits until the server is gone; a server that is not running (it crashed,
    /// say) is not an error.
    private func stopServer(mode: String) async throws {
        let data = folder.appendingPathComponent("data").path
        let stopped = await tools.runServerTool("pg_ctl", ["-D", data, "-m", mode, "-w", "-t", "120", "stop"])
        if stopped.status != 0 {
            // Exit status 3: no server running.
            let status = await tools.runServerTool("pg_ctl", ["-D", data, "status"])
            guard status.status == 3 else {
                throw PostgresServerError(
                    message: "pg_ctl stop -m \(mode) failed (exit status \(stopped.status)): "
                        + "\(stopped.text)\(stopped.stderr)",
                    logFile: logFile)
            }
        }
        running.withLockedValue { $0 = false }
    }

    /// How a start of the server ended.
    private enum Launch {
        case ready
        case portTaken
    }

    /// Starts `postgres` on `port` as a child of this process (through `runuser` under root), its output appended
    /// to the log, and waits until it accepts connections; `.portTaken` when another process had the port. Each of
    /// `settings` (`name=value`) is given with `-c`, after the usual ones, which it may override.
    ///
    /// Not `pg_ctl start`: the server it leaves behind inherits the socket by which Foundation's `Process` learns
    /// that `pg_ctl` ended, so `runTool` would wait for the server's end rather than `pg_ctl`'s.
    private static func launch(
        tools: PostgresTools, folder: URL, port: Int, settings: [String] = []
    ) async throws -> Launch {
        let logFile = folder.appendingPathComponent("server.log")
        let data = folder.appendingPathComponent("data")
        let descriptor = open(logFile.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw PostgresServerError(
                message: "cannot open \(logFile.path): \(String(cString: strerror(errno)))", logFile: nil)
        }
        let log = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        defer { try? log.close() }
        let logStart = logText(logFile).count
        let command = tools.serverCommand(
            "postgres",
            [
                "-D", data.path, "-p", String(port), "-k", folder.appendingPathComponent("socket").path,
                "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=on",
                "-c", "full_page_writes=off", "-c", "max_connections=200",
            ] + settings.flatMap { ["-c", $0] })
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        let exited = NIOLockedValueBox(false)
        process.terminationHandler = { _ in exited.withLockedValue { $0 = true } }
        do {
            try process.run()
        } catch {
            throw PostgresServerError(
                message: "cannot run \(command.joined(separator: " ")): \(error)", logFile: logFile)
        }
        let isReady = tools.binary("pg_isready")
        let pidFile = data.appendingPathComponent("postmaster.pid")
        do {
            try await waitUntil("PostgreSQL on 127.0.0.1:\(port) accepts connections") {
                if exited.withLockedValue({ $0 }) { return true }
                guard serverIsReady(pidFile: pidFile) else { return false }
                let check = ["-q", "-h", "127.0.0.1", "-p", String(port), "-U", "pipeline", "-d", "postgres"]
                return await runTool(isReady, check).status == 0
            }
        } catch let error as WaitTimedOut {
            throw PostgresServerError(message: error.description, logFile: logFile)
        }
        guard exited.withLockedValue({ $0 }) else { return .ready }
        let newLog = String(decoding: logText(logFile).dropFirst(logStart), as: UTF8.self)
        if newLog.contains("Address already in use") { return .portTaken }
        throw PostgresServerError(message: "postgres on port \(port) exited as it started", logFile: logFile)
    }

    /// Puts a rule first in the cluster's `pg_hba.conf` (the first rule that matches applies) that asks `user`
    /// for its password over TCP; every other user still enters without one. The file is rewritten in place, so it
    /// keeps its owner.
    private static func requirePassword(of user: String, in data: URL) throws {
        let file = data.appendingPathComponent("pg_hba.conf")
        do {
            let rules = try String(contentsOf: file, encoding: .utf8)
            try ("host all \(user) 127.0.0.1/32 scram-sha-256\n" + rules).write(
                to: file, atomically: false, encoding: .utf8)
        } catch {
            throw PostgresServerError(message: "cannot add a rule to \(file.path): \(error)", logFile: nil)
        }
    }

    /// Whether `postmaster.pid` names a live server that is ready, as `pg_ctl -w` sees it (its 8th line is the
    /// server's state).
    private static func serverIsReady(pidFile: URL) -> Bool {
        guard let text = try? String(contentsOf: pidFile, encoding: .utf8) else { return false }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 8, let pid = pid_t(lines[0].trimmingCharacters(in: .whitespaces)), kill(pid, 0) == 0
        else { return false }
        return lines[7].trimmingCharacters(in: .whitespaces) == "ready"
    }

    /// The bytes of the log (none while there is no log).
    private static func logText(_ logFile: URL) -> Data {
        (try? Data(contentsOf: logFile)) ?? Data()
    }

    /// Makes `folder` (0755, so the server's user reaches it also when it is not the owner) and its `socket`
    /// folder (0700), both given to `owner` when there is one. `initdb` makes `data` itself.
    static func makeFolders(_ folder: URL, owner: PostgresTools.Account?) throws {
        let socket = folder.appendingPathComponent("socket")
        try FileManager.default.createDirectory(at: socket, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: socket.path)
        if let owner {
            for path in [folder.path, socket.path] where chown(path, owner.uid, owner.gid) != 0 {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(at: folder)
                throw PostgresServerError(message: "cannot give \(path) to \(owner.name): \(reason)", logFile: nil)
            }
        }
    }

    /// Starts `sh`, which waits for the end of its standard input, then runs `stop` and removes `folder`. Returns
    /// the write end of the pipe on its standard input: only this process holds it (close-on-exec, so no other
    /// child inherits it), so the input ends when it is closed or when this process ends, however it ends. The
    /// child is in a process group of its own (Foundation's `Process` does that), so a Ctrl-C to the tests does
    /// not reach it.
    static func startWatchdog(folder: URL, stop: [String]) throws -> Int32 {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            throw PostgresServerError(
                message: "cannot make the watchdog's pipe: \(String(cString: strerror(errno)))", logFile: nil)
        }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        let input = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments =
            [
                "-c", "trap '' HUP INT; cat > /dev/null; folder=$1; shift; \"$@\"; rm -rf -- \"$folder\"",
                "postgres-watchdog", folder.path,
            ] + stop
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            try? input.close()
            close(ends[1])
            throw PostgresServerError(message: "cannot start the watchdog (/bin/sh): \(error)", logFile: nil)
        }
        try? input.close()
        return ends[1]
    }
}

/// A step of starting, stopping or using a ``PostgresServer`` that failed.
public struct PostgresServerError: Error, CustomStringConvertible {
    /// What failed, with the output of the tool that failed.
    public var message: String
    /// The server's log, when there is one yet.
    public var logFile: URL?
    /// The last lines of the log when the error happened ("" when there is none).
    public var logTail: String

    /// An error about `message`, with the tail of `logFile` as it is now.
    public init(message: String, logFile: URL?) {
        self.message = message
        self.logFile = logFile
        let log = logFile.flatMap { try? Data(contentsOf: $0) }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        self.logTail = log.split(separator: "\n", omittingEmptySubsequences: false).suffix(30).joined(separator: "\n")
    }

    public var description: String {
        let trimmedTail = logTail.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let logFile, !trimmedTail.isEmpty else { return "PostgresServer: \(message)" }
        return "PostgresServer: \(message)\n--- the end of \(logFile.path) ---\n\(trimmedTail)"
    }
}

/// A free TCP port on 127.0.0.1 (the system's choice for port 0), for a server that is told its port. Another
/// process may take it before the server binds it: the caller retries with another one when that happens.
public func freeLoopbackPort() throws -> Int {
    #if canImport(Glibc)
        let stream = Int32(SOCK_STREAM.rawValue)
    #else
        let stream = SOCK_STREAM
    #endif
    let descriptor = socket(AF_INET, stream, 0)
    guard descriptor >= 0 else {
        throw PeerError(message: "socket() failed: \(String(cString: strerror(errno)))")
    }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    guard bound == 0 else {
        throw PeerError(message: "bind(127.0.0.1:0) failed: \(String(cString: strerror(errno)))")
    }
    let named = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    guard named == 0 else {
        throw PeerError(message: "getsockname failed: \(String(cString: strerror(errno)))")
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Where the PostgreSQL binaries are, and the user that runs the server when this process is root.
struct PostgresTools: Sendable {
    /// A system user.
    struct Account: Sendable {
        var name: String
        var uid: uid_t
        var gid: gid_t
    }

    /// The folder of `initdb`, `postgres`, `pg_ctl`, `pg_isready`, `createdb`.
    var bin: URL
    /// The user that runs `initdb`, `postgres` and `pg_ctl` (through `runuser`), when this process is root.
    var account: Account?
    /// `runuser`, when ``account`` is set.
    var runuser: String

    /// The binaries, and under root the user to run the server as (made when there is none).
    static func find() async throws -> PostgresTools {
        guard let bin = binaryFolder() else {
            throw PostgresServerError(
                message:
                    "no PostgreSQL server binaries (initdb, postgres, pg_ctl, pg_isready, createdb) in "
                    + "$POSTGRES_BIN, /usr/lib/postgresql/<N>/bin or on PATH: install postgresql-15 "
                    + "(scripts/install-deps.sh does)",
                logFile: nil)
        }
        guard getuid() == 0 else { return PostgresTools(bin: bin, account: nil, runuser: "") }
        guard let runuser = firstExecutable(["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"]) else {
            throw PostgresServerError(
                message: "running as root, and PostgreSQL refuses to: runuser (util-linux) is needed to run it as "
                    + "another user",
                logFile: nil)
        }
        return PostgresTools(bin: bin, account: try await serverAccount(), runuser: runuser)
    }

    /// The path of binary `name`.
    func binary(_ name: String) -> String {
        bin.appendingPathComponent(name).path
    }

    /// The command line of server tool `name`: through `runuser -u USER --` under root.
    func serverCommand(_ name: String, _ arguments: [String]) -> [String] {
        guard let account else { return [binary(name)] + arguments }
        return [runuser, "-u", account.name, "--", binary(name)] + arguments
    }

    /// Runs server tool `name` (`initdb`, `pg_ctl`) to its end (not `postgres`, which ``PostgresServer`` starts).
    func runServerTool(_ name: String, _ arguments: [String]) async -> ToolOutput {
        let command = serverCommand(name, arguments)
        return await runTool(command[0], Array(command.dropFirst()))
    }

    /// `POSTGRES_BIN` when it is set, else the first of `/usr/lib/postgresql/<N>/bin` (15, else the newest) and
    /// the folders on `PATH` that has all the binaries used here.
    private static func binaryFolder() -> URL? {
        var candidates: [String] = []
        if let configured = ProcessInfo.processInfo.environment["POSTGRES_BIN"] {
            candidates = [configured]
        } else {
            let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
                .compactMap { Int($0) }.sorted { ($0 == 15 ? 1 : 0, $0) > ($1 == 15 ? 1 : 0, $1) }
            candidates = versions.map { "/usr/lib/postgresql/\($0)/bin" }
            candidates += (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        }
        return candidates.first { folder in
            ["initdb", "postgres", "pg_ctl", "pg_isready", "createdb"].allSatisfy {
                FileManager.default.isExecutableFile(
                    atPath: URL(fileURLWithPath: folder).appendingPathComponent($0).path)
            }
        }.map { URL(fileURLWithPath: $0) }
    }

    /// The `postgres` user (Debian's packages make it), else `pipeline-test`, made as a system user when missing.
    private static func serverAccount() async throws -> Account {
        if let account = lookUp("postgres") ?? lookUp("pipeline-test") { return account }
        guard let useradd = firstExecutable(["/usr/sbin/useradd", "/sbin/useradd", "/usr/bin/useradd"]) else {
            throw PostgresServerError(
                message: "running as root, with no postgres user to run PostgreSQL as, and no useradd to make one",
                logFile: nil)
        }
        let made = await runTool(
            useradd, ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "pipeline-test"])
        // Another test process may have made it meanwhile: what counts is that it exists now.
        guard let account = lookUp("pipeline-test") else {
            throw PostgresServerError(
                message: "useradd pipeline-test failed (exit status \(made.status)): \(made.stderr)", logFile: nil)
        }
        return account
    }

    /// The user `name`, when there is one.
    private static func lookUp(_ name: String) -> Account? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>? = nil
        let size = 16_384
        var buffer = [CChar](repeating: 0, count: size)
        guard getpwnam_r(name, &entry, &buffer, size, &result) == 0, result != nil else { return nil }
        return Account(name: name, uid: entry.pw_uid, gid: entry.pw_gid)
    }

    private static func firstExecutable(_ paths: [String]) -> String? {
        paths.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
