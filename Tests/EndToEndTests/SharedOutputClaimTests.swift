import Foundation
import SharedBatch
import StageKit
import TestSupport
import Testing

/// Two items writing one file in a shared batch: `submit` claims an item's files as it queues it, so a second
/// submission (from another folder, at the same moment) cannot queue a writer of a file a queued item writes. The
/// refused item is recorded failed (`status --failed`), and `submit --failed` queues it once the clash is gone. A file
/// named only as its stage starts is claimed by the worker then.
@Suite struct SharedOutputClaimTests {
    /// Copies each input to `$OUTDIR_X/<stem>.copy`: an absolute folder, named by `env`.
    static let copying = """
        {"version": 1, "name": "copies", "inputs": {"path": "in"},
         "stages": [{"id": "copy", "uses": "file.copy", "with": {"from": "${input.path}", "to": "${env.OUTDIR_X}", "name": "${input.stem}.copy"}}]}
        """

    @Test func twoSubmissionsAtOnceQueueOneWriterOfAFile() async throws {
        let scratch = try Scratch()
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        try scratch.write("one/a.txt", "from one\n")
        try scratch.write("two/a.dat", "from two\n")
        let environment = ["OUTDIR_X": scratch.path("out").path]
        // A relative output would be taken from each worker's own folder: submit refuses it.
        try scratch.write("relative.json", OutputClaimTests.copying)
        let relative = try await Binary.run(
            ["submit", "relative.json", "--db", url, "--input", "one"], in: scratch.root)
        #expect(relative.status == 2 && relative.stderr.contains("a relative path"), "\(relative.stderr)")

        try scratch.write("wf.json", Self.copying)
        let (root, two) = (scratch.root, scratch.path("two"))
        async let first = Binary.run(
            ["submit", "wf.json", "--db", url, "--input", "one"], in: root, environment: environment)
        async let second = Binary.run(
            ["submit", "../wf.json", "--db", url, "--input", "."], in: two, environment: environment)
        let results = try await [first, second]
        #expect(results.map(\.status).sorted() == [0, 1], "\(results.map { $0.stdout + $0.stderr })")
        let refused = results.first { $0.status == 1 }
        #expect(refused?.stdout.contains("1 refused") == true, "\(String(describing: refused?.stdout))")

        // The refusal is kept with the env value redacted.
        let failed = try await Binary.run(["status", "--db", url, "--failed"], in: scratch.root)
        #expect(failed.stdout.contains("output-collision"), "\(failed.stdout)")
        #expect(failed.stdout.contains("${env.OUTDIR_X}/a.copy"), "\(failed.stdout)")
        #expect(!failed.stdout.contains(scratch.path("out").path), "\(failed.stdout)")
        let database = try await BatchDatabase(url: url)
        let counts = try await BatchQueue(database: database).status().workflows["copies"]
        #expect(counts?.queued == 1 && counts?.byStatus["failed"] == 1, "\(String(describing: counts))")
        await database.close()

        // The dashboard cannot queue it (it was never queued) and says what can.
        let served = try await ServedDashboard.start(
            ["--db", url], in: scratch.root, environment: ["PIPELINE_SERVE_TOKEN": "dashboard-token-1234"])
        defer { served.process.signal(SIGKILL) }
        let (_, listed) = try await served.request("/api/items?status=failed", bearer: "dashboard-token-1234")
        let refusedID = try #require(listed["items"]?.arrayValue?.first?["id"]?.intValue, "\(listed)")
        let (code, answer) = try await served.request(
            "/api/items/\(refusedID)/retry", method: "POST", bearer: "dashboard-token-1234")
        #expect(code == 409, "\(answer)")
        #expect(answer["error"]?.stringValue?.contains("submit WORKFLOW --failed") == true, "\(answer)")

        // Once the queued writer is forgotten, the refused one is queued again and a worker copies it.
        let winner = results[0].status == 0 ? "a.txt" : "a.dat"
        let loser = winner == "a.txt" ? "two" : "one"
        let forgot = try await Binary.run(["forget", "wf.json", winner, "--db", url, "--yes"], in: scratch.root)
        #expect(forgot.status == 0, "\(forgot.stdout)\(forgot.stderr)")
        let resubmitted = try await Binary.run(
            ["submit", "wf.json", "--db", url, "--input", loser, "--failed"], in: scratch.root, environment: environment
        )
        #expect(resubmitted.status == 0 && resubmitted.stdout.contains("queued 1 item"), "\(resubmitted.stdout)")
        let worker = try Binary.start(
            ["worker", "--db", url] + WorkerTests.workerArguments, in: scratch.root, environment: environment)
        let copy = scratch.path("out/a.copy").path
        try await waitUntil("the copy is made", limit: .seconds(60)) { FileManager.default.fileExists(atPath: copy) }
        worker.signal(SIGTERM)
        #expect(await worker.exit() == 0)
        #expect(scratch.read("out/a.copy") == "from \(loser)\n")
        try await server.stop()
    }

    /// Two workers take up two items whose copy is named by an earlier stage's output, one file for both: `submit`
    /// cannot know it, so each worker claims it as the copy starts, and exactly one item fails with
    /// `output-collision`.
    @Test func twoWorkersClaimAFileNamedAsTheirStageStarts() async throws {
        let scratch = try Scratch()
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        let environment = ["OUTDIR_X": scratch.path("out").path]
        try scratch.write("in/a.txt", "a\n")
        try scratch.write("in/b.txt", "b\n")
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "named", "inputs": {"path": "in"},
             "stages": [
              {"id": "names", "uses": "set", "with": {"name": "same.copy"}},
              {"id": "copy", "uses": "file.copy", "with": {"from": "${input.path}", "to": "${env.OUTDIR_X}", "name": "${names.name}"}}
             ]}
            """)
        let submitted = try await Binary.run(
            ["submit", "wf.json", "--db", url], in: scratch.root, environment: environment)
        #expect(submitted.status == 0 && submitted.stdout.contains("queued 2 items"), "\(submitted.stdout)")
        let workers = try (0..<2).map { _ in
            try Binary.start(
                ["worker", "--db", url] + WorkerTests.workerArguments, in: scratch.root, environment: environment)
        }
        let database = try await BatchDatabase(url: url)
        let queue = BatchQueue(database: database)
        try await waitUntil("both items ended", limit: .seconds(60)) {
            let counts = try await queue.status().workflows["named"]
            return (counts?.byStatus["succeeded"] ?? 0) + (counts?.byStatus["failed"] ?? 0) == 2
        }
        for worker in workers { worker.signal(SIGTERM) }
        for worker in workers { #expect(await worker.exit() == 0) }
        let counts = try await queue.status().workflows["named"]
        #expect(counts?.byStatus["succeeded"] == 1 && counts?.byStatus["failed"] == 1, "\(String(describing: counts))")
        await database.close()
        let failed = try await Binary.run(["status", "--db", url, "--failed"], in: scratch.root)
        #expect(failed.stdout.contains("output-collision"), "\(failed.stdout)")
        let copy = scratch.read("out/same.copy")
        #expect(copy == "a\n" || copy == "b\n", "\(String(describing: copy))")
        try await server.stop()
    }
}
