import Foundation
import SharedBatch
import TestSupport
import Testing

/// Two items writing one file in a shared batch: `submit` claims an item's files as it queues it, so a second
/// submission (from another folder, at the same moment) cannot queue a writer of a file a queued item writes. The
/// refused item is recorded failed (`status --failed`), and `submit --failed` queues it once the clash is gone.
@Suite struct SharedOutputClaimTests {
    @Test func twoSubmissionsAtOnceQueueOneWriterOfAFile() async throws {
        let scratch = try Scratch()
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        try scratch.write("one/a.txt", "from one\n")
        try scratch.write("two/a.dat", "from two\n")
        // The copy's folder is relative: both submissions take it from the workflow's folder, wherever they run.
        try scratch.write("wf.json", OutputClaimTests.copying)
        let (root, two) = (scratch.root, scratch.path("two"))
        async let first = Binary.run(["submit", "wf.json", "--db", url, "--input", "one"], in: root)
        async let second = Binary.run(["submit", "../wf.json", "--db", url, "--input", "."], in: two)
        let results = try await [first, second]
        #expect(results.map(\.status).sorted() == [0, 1], "\(results.map { $0.stdout + $0.stderr })")
        let refused = results.first { $0.status == 1 }
        #expect(refused?.stdout.contains("1 refused") == true, "\(String(describing: refused?.stdout))")

        let failed = try await Binary.run(["status", "--db", url, "--failed"], in: scratch.root)
        #expect(failed.stdout.contains("output-collision"), "\(failed.stdout)")
        let database = try await BatchDatabase(url: url)
        let counts = try await BatchQueue(database: database).status().workflows["copies"]
        #expect(counts?.queued == 1 && counts?.byStatus["failed"] == 1, "\(String(describing: counts))")
        await database.close()

        // Once the queued writer is forgotten, the refused one is queued again and a worker copies it.
        let winner = results[0].status == 0 ? "a.txt" : "a.dat"
        let loser = winner == "a.txt" ? "two" : "one"
        let forgot = try await Binary.run(["forget", "wf.json", winner, "--db", url, "--yes"], in: scratch.root)
        #expect(forgot.status == 0, "\(forgot.stdout)\(forgot.stderr)")
        let resubmitted = try await Binary.run(
            ["submit", "wf.json", "--db", url, "--input", loser, "--failed"], in: scratch.root)
        #expect(resubmitted.status == 0 && resubmitted.stdout.contains("queued 1 item"), "\(resubmitted.stdout)")
        let worker = try Binary.start(["worker", "--db", url] + WorkerTests.workerArguments, in: scratch.root)
        let copy = scratch.path("out/a.copy").path
        try await waitUntil("the copy is made", limit: .seconds(60)) { FileManager.default.fileExists(atPath: copy) }
        worker.signal(SIGTERM)
        #expect(await worker.exit() == 0)
        #expect(scratch.read("out/a.copy") == "from \(loser)\n")
        try await server.stop()
    }
}
