import Foundation
import PipelineKit
import PostgresNIO
import StageKit
import TestSupport
import Testing

@testable import SharedBatch

/// The PostgreSQL store and queue against a real server: fencing, leases, and the ledger's semantics.
@Suite struct PostgresStoreTests {
    /// A database with one queued item of workflow `w`.
    static func queuedItem() async throws -> (PostgresServer, BatchDatabase, Int64) {
        let server = try await PostgresServer.start()
        let database = try await BatchDatabase(url: try await server.createDatabase())
        let store = PostgresStore(database: database)
        let input = InputItem(path: "/media/a.mp4", relativePath: "a.mp4", size: 10, modified: 0)
        let admitted = try await store.admit(
            ItemAdmission(item: nil, newVersion: false, fingerprint: "full:10:aa", input: input), workflow: "w")
        let queue = BatchQueue(database: database)
        let workflow = try await queue.store(
            SubmittedWorkflow(
                name: "w", file: "/w.json", document: Data("{}".utf8), vars: [:], digest: "d", stages: ["s"]))
        try await queue.enqueue([admitted.ref.item: "d"], with: workflow)
        return (server, database, admitted.ref.item)
    }

    @Test func aWorkerWhoseLeaseWasTakenOverCannotWrite() async throws {
        let (server, database, item) = try await Self.queuedItem()
        let queue = BatchQueue(database: database)
        let first = try #require(try await queue.claim(for: "first", lease: .seconds(1)))
        #expect(first.takenOverFrom == nil)
        #expect(try await queue.claim(for: "second", lease: .seconds(1)) == nil, "a live lease is not claimed")
        let firstLeases = LeaseBook()
        firstLeases.hold(item, generation: first.generation)
        let firstStore = PostgresStore(database: database, leases: firstLeases)
        let ref = ItemVersion(item: item, version: 1)
        try await firstStore.save(StageRecord(stage: "s", uses: "exec", status: .running, optionsHash: "1"), for: ref)

        // The first worker stalls past its lease: its item counts as queued again, and the second takes it over.
        try await waitUntil("the first lease ran out") {
            let beat = try await queue.heartbeat(
                WorkerRecord(id: "idle", host: "h", pid: 2), holding: [:], lease: .seconds(30), patience: .seconds(10))
            return beat.queued == 1
        }
        let box = ClaimBox()
        try await waitUntil("the lease expired and the item was claimed again") {
            box.claim = try await queue.claim(for: "second", lease: .seconds(30))
            return box.claim != nil
        }
        let second = try #require(box.claim)
        #expect(second.takenOverFrom == "first")
        #expect(second.generation == first.generation + 1)
        let secondLeases = LeaseBook()
        secondLeases.hold(item, generation: second.generation)
        let secondStore = PostgresStore(database: database, leases: secondLeases)
        try await secondStore.save(
            StageRecord(stage: "s", uses: "exec", status: .succeeded, optionsHash: "2"), for: ref)

        await #expect(throws: StateError.self) {
            try await firstStore.save(
                StageRecord(stage: "s", uses: "exec", status: .failed, optionsHash: "1"), for: ref)
        }
        #expect(firstLeases.release(item), "the refused write marks the lease lost")
        let beat = try await queue.heartbeat(
            WorkerRecord(id: "first", host: "h", pid: 1), holding: [item: first.generation], lease: .seconds(30),
            patience: .seconds(10))
        #expect(beat.lost == [item], "the heartbeat of the first worker reports the lease lost")
        let records = try await PostgresStore(database: database).checkpoints(workflow: "w", items: [item])
        #expect(records[item]?["s"]?.status == .succeeded && records[item]?["s"]?.optionsHash == "2")
        await database.close()
        try await server.stop()
    }

    @Test func heartbeatsKeepLeasesAndReportCancelRequests() async throws {
        let (server, database, item) = try await Self.queuedItem()
        let queue = BatchQueue(database: database)
        let worker = WorkerRecord(id: "worker", host: "h", pid: 1)
        let idle = try await queue.heartbeat(worker, holding: [:], lease: .seconds(30), patience: .seconds(10))
        #expect(idle.queued == 1, "the queued item no lease holds")
        let claim = try #require(try await queue.claim(for: "worker", lease: .seconds(2)))
        try await PostgresStore(database: database).requestCancel(of: [item])
        let beat = try await queue.heartbeat(
            worker, holding: [item: claim.generation], lease: .seconds(30), patience: .seconds(10))
        #expect(beat.lost.isEmpty && beat.cancelRequested == [item] && beat.queued == 0)
        #expect(try await queue.claim(for: "other", lease: .seconds(1)) == nil)
        let status = try await queue.status()
        #expect(status.workers.map(\.id) == ["worker"] && status.workers.first?.holding == 1)
        #expect(status.workflows["w"]?.running == 1)
        await database.close()
        try await server.stop()
    }

    @Test func theLedgerReadsAsTheSQLiteOneDoes() async throws {
        let server = try await PostgresServer.start()
        let database = try await BatchDatabase(url: try await server.createDatabase())
        let store = PostgresStore(database: database)
        // Paths sort in the byte order of their UTF-8: "Z" < "a" < "é".
        for (index, name) in ["a", "é", "Z"].enumerated() {
            _ = try await store.admit(
                ItemAdmission(
                    item: nil, newVersion: false, fingerprint: "full:1:\(index)",
                    input: InputItem(path: "/m/\(name)", relativePath: name, size: 1, modified: 0)), workflow: "w")
        }
        let range = try await store.items(workflow: "w", pathsFrom: "/m/Z", through: "/m/a")
        #expect(Set(range.map(\.input.relativePath)) == ["Z", "a"])
        // A new version keeps the previous version's outputs for ${previous.*}.
        let first = try #require(try await store.snapshot(workflow: "w").items.first { $0.input.relativePath == "a" })
        var record = StageRecord(stage: "up", uses: "exec", status: .succeeded, optionsHash: "h")
        record.outputs = ["link": "https://example.com/1"]
        try await store.save(record, for: first.current)
        let next = try await store.admit(
            ItemAdmission(item: first.id, newVersion: true, fingerprint: "full:1:new", input: first.input),
            workflow: "w")
        #expect(next.ref.version == 2 && next.stages.isEmpty)
        #expect(next.previousOutputs["up"] == ["link": "https://example.com/1"])
        await database.close()
        try await server.stop()
    }

    /// An operation whose answer does not come within its patience is given up then, not when the statement
    /// ends, and the pool goes on serving: the connection it ran on is closed, its transaction with it.
    @Test func anOperationGivesUpWhenItsPatienceRunsOut() async throws {
        let server = try await PostgresServer.start()
        let database = try await BatchDatabase(url: try await server.createDatabase())
        let clock = ContinuousClock()
        let started = clock.now
        await #expect {
            try await database.rows("wait for the server", patience: .seconds(1), "SELECT pg_sleep(600)")
        } throws: { error in
            "\(error)".contains("cannot wait for the server") && "\(error)".contains("gave up after 1 s")
        }
        #expect(clock.now - started < .seconds(60), "gave up after \(clock.now - started), not at its patience")
        let store = PostgresStore(database: database)
        for index in 0..<12 {
            _ = try await store.admit(
                ItemAdmission(
                    item: nil, newVersion: false, fingerprint: "full:1:\(index)",
                    input: InputItem(path: "/m/\(index)", relativePath: "\(index)", size: 1, modified: 0)),
                workflow: "w")
        }
        #expect(try await store.snapshot(workflow: "w").items.count == 12)
        await database.close()
        try await server.stop()
    }
}

/// A claim found inside a condition closure.
final class ClaimBox: @unchecked Sendable {
    var claim: Claim?
}
