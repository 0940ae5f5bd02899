import ArgumentParser
import Dashboard
import Foundation
import PipelineKit
import SharedBatch

#if canImport(Glibc)
    import Glibc
#endif

/// `pipeline serve`: a web dashboard and a JSON status API over a state folder or a shared batch, live while runs
/// and workers write to it.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a web dashboard and a status API over the ledger of a state folder or a shared batch.")

    @OptionGroup var stateOptions: StateOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve a batch that workers share through this PostgreSQL database instead of the state folder.",
            valueName: "URL"))
    var db: String?

    @Option(name: .long, help: "The port (0: one the system picks, printed at start).")
    var port: Int = 8090

    @Option(name: .long, help: "The address to listen on; anything but 127.0.0.1 serves other machines too.")
    var host: String = "127.0.0.1"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Require this token to see the dashboard and to retry or cancel items (default: PIPELINE_SERVE_TOKEN; without one the dashboard is read-only and its reads are open).",
            valueName: "TOKEN"))
    var token: String?

    @Flag(name: .long, help: "With a token: let requests without it read the dashboard (actions still need it).")
    var publicReads = false

    @Option(
        name: .customLong("allow-host"),
        help: ArgumentHelp(
            "Answer to this host name too (repeatable), besides 127.0.0.1, localhost and --host: a name a proxy or DNS gives this machine. Requests naming any other host are refused (421).",
            valueName: "NAME"))
    var allowedHosts: [String] = []

    /// How long a request waits for a shared batch's database that cannot be reached before it answers 503: the
    /// page asks again every second.
    static let readPatience = Duration.seconds(3)

    /// The environment variable a token may come from, so it stays out of the process list.
    static let tokenVariable = "PIPELINE_SERVE_TOKEN"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        if let token, token.count < 8 { throw ValidationError("--token must have at least 8 characters") }
        if let name = allowedHosts.first(where: { $0.isEmpty || $0.contains { $0 == "/" || $0 == " " } }) {
            throw ValidationError("--allow-host takes a host name, such as media.example.com, not '\(name)'")
        }
    }

    func run() async throws {
        let token =
            self.token ?? ProcessInfo.processInfo.environment[Self.tokenVariable].flatMap { $0.isEmpty ? nil : $0 }
        try await SharedBatchOptions.using(db, opening: .existingBatch, patience: Self.readPatience) { database in
            let source: DashboardSource
            if let database {
                source = .sharedBatch(database)
            } else {
                source = stateFolder()
            }
            let server: DashboardServer
            do {
                server = try await DashboardServer.start(
                    source: source, host: host, port: port,
                    access: DashboardAccess(token: token, publicReads: publicReads, hostNames: allowedHosts))
            } catch {
                throw CommandFailure(.failed, "pipeline: cannot serve on \(host):\(port): \(error)")
            }
            Output.line(
                "serving \(db == nil ? URL(fileURLWithPath: stateOptions.state).standardizedFileURL.path : "the shared batch") on http://\(host):\(server.port)/ (\(Self.accessSummary(token: token, publicReads: publicReads)))"
            )
            let failure = await SignalHandling.cancellingOnSignal { () async -> (any Error)? in
                do {
                    try await server.run()
                    return nil
                } catch is CancellationError {
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { throw CommandFailure.failed(failure) }
        }
    }

    /// What the start line says of who may read and act.
    static func accessSummary(token: String?, publicReads: Bool) -> String {
        guard token != nil else { return "read-only" }
        return publicReads ? "reads open, actions need the token" : "reads and actions need the token"
    }

    /// The state folder as a source: its ledger read per request, and a cancel or a retry left in the ledger for the
    /// process that holds the folder, which is told with SIGUSR1 as `pipeline cancel` does (a retry only when a
    /// `pipeline watch` holds it: a `pipeline run` takes failed items up when it starts, so the next one does).
    private func stateFolder() -> DashboardSource {
        let path = stateOptions.state
        let folder = URL(fileURLWithPath: path).standardizedFileURL
        return .stateFolder(
            location: folder.path,
            openLedger: { try StateFolder.openForReading(path)?.ledger },
            requestCancel: { items in
                guard let holder = StateFolder.busyHolder(path) else { return false }
                let ledger = try SQLiteLedger(folder: folder)
                defer { try? ledger.close() }
                try await ledger.requestCancel(of: items)
                kill(holder, SIGUSR1)
                return true
            },
            requestRetry: { try await Self.requestRetry($0, in: path) },
            // Only the progress the folder's holder wrote: one a killed run left is not read, whoever holds it now.
            progress: { ProgressFile.read(in: folder, writtenBy: StateFolder.busyHolder(path)) })
    }

    /// Leaves a retry request in the ledger of the state folder at `path` for each failed item `selection` selects
    /// whose file is there (a request for a gone file is withdrawn: no run takes it up), and wakes a `pipeline watch`
    /// holding the folder with SIGUSR1 when it runs some of them: those of the workflow it watches.
    private static func requestRetry(_ selection: RetrySelection, in path: String) async throws -> StateFolderRetry {
        let folder = URL(fileURLWithPath: path).standardizedFileURL
        guard SQLiteLedger.exists(in: folder) else { return StateFolderRetry(items: []) }
        let ledger = try SQLiteLedger(folder: folder)
        defer { try? ledger.close() }
        let files = try await ledger.files(of: try await selection.request(in: ledger))
        let gone = Set(files.filter { !FileManager.default.fileExists(atPath: $0.value.path) }.keys)
        if !gone.isEmpty { try await ledger.withdrawRetryRequests(of: gone) }
        let holder = StateFolder.holder(path)
        let runningNow = Set(files.filter { !gone.contains($0.key) && $0.value.workflow == holder?.watching }.keys)
        if let holder, !runningNow.isEmpty { kill(holder.pid, SIGUSR1) }
        return StateFolderRetry(items: Set(files.keys).subtracting(gone), runningNow: runningNow, gone: gone)
    }
}
