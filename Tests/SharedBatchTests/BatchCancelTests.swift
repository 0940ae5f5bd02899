import Foundation
import PipelineKit
import PostgresNIO
import StageKit
import Synchronization
import TestSupport
import Testing

@testable import SharedBatch

/// `pipeline cancel --db` against a real server: which items a worker undoes, which the command does, and what it
/// hears from the workers.
@Suite struct BatchCancelTests {
    /// Queued items of workflow `w`, named `names`, in that order.
    static func queuedItems(_ names: [String], in database: BatchDatabase) async throws -> [LedgerItem] {
        let store = PostgresStore(database: database)
        var admitted: [Int64: String] = [:]
        for name in names {
            let input = InputItem(path: "/media/\(name)", relativePath: name, size: 10, modified: 0)
            let item = try await store.admit(
                ItemAdmission(item: nil, newVersion: false, fingerprint: "full:10:\(name)", input: input), workflow: "w"
            )
            admitted[item.ref.item] = "d"
        }
        let queue = BatchQueue(database: database)
        let workflow = try await queue.store(
            SubmittedWorkflow(name: "w", file: "/w.json", document: Data("{}".utf8), vars: [:], digest: "d", stages: [])
        )
        try await queue.enqueue(admitted, with: workflow)
        return try await store.snapshot(workflow: "w").items
    }

    /// An item no worker runs is undone by the command at once; one a worker undoes is reported cancelled; one whose
    /// worker answers without cancelling it failed; one whose worker dies meanwhile (its lease runs out) is undone by
    /// the command once the lease is gone.
    @Test func eachItemIsUndoneByItsWorkerOrHere() async throws {
        let server = try await PostgresServer.start()
        let database = try await BatchDatabase(url: try await server.createDatabase())
        let items = try await Self.queuedItems(["byWorker.mp4", "refused.mp4", "idle.mp4", "orphan.mp4"], in: database)
        let (byWorker, refused, idle, orphan) = (items[0], items[1], items[2], items[3])
        let queue = BatchQueue(database: database)
        for item in [byWorker, refused, orphan] {
            let claim = try await queue.claim(for: "worker", lease: .seconds(60), excludingItems: [idle.id])
            #expect(claim?.item.id == item.id)
        }

        let store = PostgresStore(database: database)
        let (events, heard) = AsyncStream.makeStream(of: BatchCancel.Event.self)
        // The worker, once asked: it undoes one item, fails to undo another, and dies before the third.
        let worker = Task {
            for await event in events {
                guard case .askedWorkers = event else { continue }
                try await store.setStatus(.cancelled, of: [byWorker.id])
                try await store.answerCancelRequests(for: [refused.id])
                try await database.rows(
                    "let a lease run out", "UPDATE items SET lease_expires = now() WHERE id = \(orphan.id)")
                return
            }
        }
        let undoneHere = Mutex<[[String]]>([])
        let reported = Mutex<[String]>([])
        let outcome = try await BatchCancel(database: database, workflow: "w", poll: .milliseconds(50)).cancel(items) {
            undone in
            undoneHere.withLock { $0.append(undone.map(\.input.relativePath)) }
            try? await store.setStatus(.cancelled, of: undone.map(\.id))
            var summary = RunSummary(items: undone.count)
            summary.succeeded = undone.count
            return summary
        } report: { event in
            heard.yield(event)
            switch event {
            case .askedWorkers(let count): reported.withLock { $0.append("asked \(count)") }
            case .cancelledByWorker(let item): reported.withLock { $0.append("cancelled \(item.input.relativePath)") }
            case .workerCouldNotUndo(let item): reported.withLock { $0.append("refused \(item.input.relativePath)") }
            }
        }
        heard.finish()
        try await worker.value

        #expect(outcome == .failed, "the refused undo fails the cancel")
        #expect(reported.withLock { $0 } == ["asked 3", "cancelled byWorker.mp4", "refused refused.mp4"])
        #expect(undoneHere.withLock { $0 } == [["idle.mp4"], ["orphan.mp4"]])
        let statuses = try await store.snapshot(workflow: "w").items.map { $0.status == .cancelled }
        #expect(statuses == [true, false, true, true])
        await database.close()
        try await server.stop()
    }

    /// An undo in the command's process that is interrupted ends the cancel at once: the workers' items are not
    /// waited for.
    @Test func anInterruptedUndoHereEndsTheCancel() async throws {
        let server = try await PostgresServer.start()
        let database = try await BatchDatabase(url: try await server.createDatabase())
        let items = try await Self.queuedItems(["running.mp4", "idle.mp4"], in: database)
        _ = try await BatchQueue(database: database).claim(
            for: "worker", lease: .seconds(60), excludingItems: [items[1].id])
        let outcome = try await BatchCancel(database: database, workflow: "w").cancel(items) { undone in
            var summary = RunSummary(items: undone.count)
            summary.interrupted = true
            return summary
        } report: { _ in
        }
        #expect(outcome == .interrupted)
        await database.close()
        try await server.stop()
    }
}
