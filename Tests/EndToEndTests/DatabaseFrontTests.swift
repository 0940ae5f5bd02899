import Foundation
import SharedBatch
import StageKit
import TestSupport
import Testing

/// The commands that read a shared batch, given a database without one (a typo in its name, another application's
/// database): they say so with exit code 3 and create nothing there; a batch that lost some of its tables is refused
/// by every command, and a database that refuses its user ends a command with one line that names the cause without
/// the password (both exit code 1).
@Suite struct DatabaseFrontTests {
    @Test func readingCommandsRefuseADatabaseWithoutABatchAndCreateNothing() async throws {
        let scratch = try Scratch()
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase("not_a_batch")
        try scratch.write(
            "wf.json",
            #"{"version": 1, "name": "w", "inputs": {"path": "."}, "stages": [{"id": "a", "uses": "exec", "with": {"command": ["true"]}}]}"#
        )
        for arguments in [
            ["status", "--db", url], ["status", "--db", url, "--json"], ["serve", "--port", "0", "--db", url],
            ["forget", "wf.json", "--failed", "--yes", "--db", url],
        ] {
            // Bounded: a `serve` that found (or made) a batch would serve until it is stopped.
            let running = try Binary.start(arguments, in: scratch.root)
            defer { if running.isRunning { running.signal(SIGKILL) } }
            try await waitUntil("\(arguments) ended", limit: .seconds(30)) { !running.isRunning }
            let ran = (
                status: await running.exit(), stdout: await running.stdout.text(), stderr: await running.stderr.text()
            )
            #expect(ran.status == 3, "\(arguments): \(ran.status) \(ran.stdout) \(ran.stderr)")
            #expect(
                ran.stderr
                    == "pipeline: no batch in the database postgres://pipeline@127.0.0.1:\(server.port)/not_a_batch: "
                    + "submit one with pipeline submit WORKFLOW --db URL, or check the database's name in the URL\n",
                "\(arguments)")
        }
        let tables = try await server.psql(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", database: "not_a_batch")
        #expect(tables == "0")
    }

    /// The batch's tables dropped under `serve --db` (the database emptied for a new start): the API answers 503
    /// saying there is no batch, which the page shows in place of its live line, and reads again once one is made.
    @Test func theDashboardSaysSoWhenTheBatchIsGone() async throws {
        let scratch = try Scratch()
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase("emptied")
        await (try await BatchDatabase(url: url)).close()
        let served = try await ServedDashboard.start(["--db", url], in: scratch.root)
        defer { served.process.signal(SIGKILL) }
        #expect(try await served.request("/api/status").0 == 200)
        _ = try await server.psql("DROP SCHEMA public CASCADE; CREATE SCHEMA public", database: "emptied")
        for path in ["/api/status", "/api/items?status=failed", "/api/items/1"] {
            let (code, body) = try await served.request(path)
            #expect(code == 503, "\(path): \(code) \(body)")
            #expect(body["error"]?.stringValue?.hasPrefix("no batch in the database") == true, "\(path): \(body)")
        }
        await (try await BatchDatabase(url: url)).close()
        #expect(try await served.request("/api/status").0 == 200)
    }

    /// A batch whose `items` table alone was dropped: `submit` and `worker` do not make it again beside the tables
    /// that still number its items (nor tell anyone to submit a batch), and the reading commands do not take it for
    /// no batch: each names the missing table and ends with exit code 1, and the database is left as it was.
    @Test func aDamagedBatchIsRefusedByEveryCommandWithWhatIsMissing() async throws {
        let scratch = try Scratch()
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase("damaged")
        try scratch.write("in/clip.txt", "clip\n")
        try scratch.write(
            "wf.json",
            #"{"version": 1, "name": "w", "inputs": {"path": "in"}, "stages": [{"id": "a", "uses": "exec", "with": {"command": ["true"]}}]}"#
        )
        let submitted = try await Binary.run(["submit", "wf.json", "--db", url], in: scratch.root)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        _ = try await server.psql("DROP TABLE items CASCADE", database: "damaged")
        let listing = "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        let tables = try await server.psql(listing, database: "damaged")
        for arguments in [
            ["submit", "wf.json", "--db", url], ["worker", "--db", url], ["status", "--db", url],
            ["forget", "wf.json", "--failed", "--yes", "--db", url],
        ] {
            let ran = try await Binary.run(arguments, in: scratch.root)
            #expect(ran.status == 1, "\(arguments): \(ran.status) \(ran.stdout) \(ran.stderr)")
            #expect(
                ran.stderr.hasPrefix(
                    "pipeline: the batch in the database postgres://pipeline@127.0.0.1:\(server.port)/damaged is damaged: "
                        + "its table items is missing; ") && ran.stderr.contains("restore the database from a backup"),
                "\(arguments): \(ran.stderr)")
            #expect(!ran.stderr.contains("submit one"), "\(arguments)")
        }
        #expect(try await server.psql(listing, database: "damaged") == tables, "a command changed the damaged batch")
    }

    @Test func aWrongPasswordIsOneLineWithoutThePassword() async throws {
        let scratch = try Scratch()
        let server = try await PostgresServer.start()
        _ = try await server.createPasswordUser(password: "right-one")
        let user = PostgresServer.passwordUser
        let ran = try await Binary.run(
            ["status", "--db", "postgres://\(user):wrong-one@127.0.0.1:\(server.port)/pipeline"], in: scratch.root)
        #expect(ran.status == 1)
        #expect(
            ran.stderr
                == "pipeline: cannot connect to the database postgres://\(user)@127.0.0.1:\(server.port)/pipeline: "
                + "password authentication failed for user \"\(user)\": check the password of user \(user) "
                + "(in the address or in PGPASSWORD)\n")
        #expect(!(ran.stdout + ran.stderr).contains("wrong-one"))
    }
}
