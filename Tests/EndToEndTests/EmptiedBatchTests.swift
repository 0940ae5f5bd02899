import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A worker that outlives its database's batch: the database is emptied (its schema dropped) while the worker runs
/// and a new batch submitted, whose workflow is numbered 1 again, as the old one was.
@Suite struct EmptiedBatchTests {
    /// The same worker runs the new batch's item with the new workflow's stages, not with the stages of the old
    /// workflow that had the same number.
    @Test func aWorkerRunsANewBatchWithItsOwnStages() async throws {
        let scratch = try Scratch()
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase("emptied")
        let log = scratch.path("effects.log").path
        // The same name for both: only the documents tell them apart.
        func workflow(folder: String, stage: String) -> String {
            """
            {"version": 1, "name": "shared", "inputs": {"path": "\(folder)"}, "stages": [
              {"id": "\(stage)", "uses": "exec", "with": {"command": ["sh", "-c", "echo \(stage) ${input.name} >> \(log)"]}}
            ]}
            """
        }
        try scratch.write("a/first.txt", "first\n")
        try scratch.write("b/second.txt", "second\n")
        try scratch.write("a.json", workflow(folder: "a", stage: "from-a"))
        try scratch.write("b.json", workflow(folder: "b", stage: "from-b"))
        @Sendable func items() async -> String {
            (try? await server.psql("SELECT relative_path, status FROM items ORDER BY id", database: "emptied")) ?? ""
        }

        let first = try await Binary.run(["submit", "a.json", "--db", url], in: scratch.root)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let worker = try Binary.start(
            ["worker", "--db", url] + WorkerTests.workerArguments, in: scratch.root)
        defer { if worker.isRunning { worker.signal(SIGKILL) } }
        try await waitUntil("batch A's item succeeded") { await items() == "first.txt|succeeded" }

        _ = try await server.psql("DROP SCHEMA public CASCADE; CREATE SCHEMA public", database: "emptied")
        let second = try await Binary.run(["submit", "b.json", "--db", url], in: scratch.root)
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        // What made the worker's cache go wrong: the new batch's workflow has the old one's number.
        #expect(try await server.psql("SELECT id FROM workflows", database: "emptied") == "1")
        try await waitUntil("batch B's item ended") {
            ["second.txt|succeeded", "second.txt|failed"].contains(await items())
        }

        #expect(await items() == "second.txt|succeeded", "\(worker.stdout.soFar)")
        #expect(
            scratch.read("effects.log") == "from-a first.txt\nfrom-b second.txt\n",
            "the worker's output: \(worker.stdout.soFar)")
        worker.signal(SIGTERM)
        #expect(await worker.exit() == 0)
        try await server.stop()
    }
}
