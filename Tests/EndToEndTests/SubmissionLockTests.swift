import Foundation
import PipelineKit
import PostgresNIO
import TestSupport
import Testing

@testable import SharedBatch

/// A submission's outcome in the run history comes from the lock its process holds while it runs: a real `pipeline
/// submit`, held up inside its run by a table lock the test takes, reads running even once a later submission of
/// its workflow exists, and interrupted once `kill -9` ended it. The next submission's own counts are in the history.
@Suite(.serialized) struct SubmissionLockTests {
    /// Holds `LOCK TABLE items IN EXCLUSIVE MODE` (reads go on, the admission of a new item waits) until `release`.
    final class ItemsLock: Sendable {
        private let release: AsyncStream<Void>.Continuation
        private let holding: Task<Void, any Error>

        init(_ database: BatchDatabase) async throws {
            let (locked, took) = AsyncStream<Void>.makeStream()
            let (released, release) = AsyncStream<Void>.makeStream()
            self.release = release
            let logger = database.logger
            holding = Task {
                try await database.transaction("hold the items") { connection in
                    try await connection.query("LOCK TABLE items IN EXCLUSIVE MODE", logger: logger)
                    took.yield()
                    for await _ in released { break }
                }
            }
            for await _ in locked { break }
        }

        func free() async throws {
            release.yield()
            try await holding.value
        }
    }

    @Test func aSubmissionUnderWayOrKilled() async throws {
        let batch = try await SharedBatch(items: 2, stageSeconds: "0")
        defer { batch.killAll() }
        let store = PostgresStore(database: batch.database)
        @Sendable func outcomes() async throws -> [String] {
            try await store.pastRuns(limit: 10, offset: 0).runs.map(\.outcome.rawValue)
        }
        try batch.scratch.write("in/item-new.txt", "a new file\n")
        let lock = try await ItemsLock(batch.database)
        let submit = try Binary.start(["submit", "wf.json", "--db", batch.url], in: batch.scratch.root)
        defer { if submit.isRunning { submit.signal(SIGKILL) } }
        try await waitUntil("the second submission is under way") { try await outcomes() == ["running", "finished"] }
        // A later submission of the same workflow does not end the one still under way.
        let later = try await store.beginRun(
            RunRecord(workflow: "shared", file: "wf.json", stages: ["a", "b"]), caching: [], sightings: [])
        try await store.finishRun(later, summary: RunSummary(items: 0))
        #expect(try await outcomes() == ["finished", "running", "finished"])
        submit.signal(SIGKILL)
        _ = await submit.exit()
        try await waitUntil("the killed submission reads interrupted") {
            try await outcomes() == ["finished", "interrupted", "finished"]
        }
        try await lock.free()
        // The next submission records what it did: the two items queued before stay so, the new one is queued.
        let next = try await Binary.run(["submit", "wf.json", "--db", batch.url], in: batch.scratch.root)
        #expect(next.status == 0, "\(next.stdout)\(next.stderr)")
        let counts = try await store.pastRuns(limit: 1, offset: 0).runs.first?.counts
        #expect(
            counts == [
                "queued": 1, "alreadyQueued": 2, "waiting": 0, "refused": 0, "reused": 0, "skipped": 0, "failed": 0,
            ], "\(String(describing: counts))")
        _ = await batch.stopAll()
    }
}
