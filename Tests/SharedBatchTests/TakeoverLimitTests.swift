import Foundation
import PipelineKit
import PostgresNIO
import StageKit
import StageRuntime
import TestSupport
import Testing

@testable import SharedBatch

/// The takeover limit against a real PostgreSQL: counted takeovers of items and segment units held alone, the
/// high-water mark of stages done, suspect items claimed only by a worker that runs nothing else, a database
/// restart that counts nothing, and queueing again that starts the count again. A worker's death is its lease
/// running out: the tests end leases in the database, as the clock would (the end-to-end tests kill workers).
@Suite struct TakeoverLimitTests {
    /// Ends the lease on `item` now, as when its worker died.
    static func expire(item: Int64, in database: BatchDatabase) async throws {
        try await database.rows(
            "end a lease", "UPDATE items SET lease_expires = now() - interval '1 millisecond' WHERE id = \(item)")
    }

    /// A store writing as the worker that holds `claim`.
    static func store(of claim: Claim, in database: BatchDatabase) -> PostgresStore {
        let leases = LeaseBook()
        leases.hold(claim.item.id, generation: claim.generation)
        return PostgresStore(database: database, leases: leases)
    }

    static func succeeded(_ stage: String) -> StageRecord {
        StageRecord(stage: stage, uses: "exec", status: .succeeded, optionsHash: "1")
    }

    /// Each worker that dies running the item alone counts one takeover; the claim that reaches the limit is
    /// abandoned (the item is failed, not run). A stage done again (it reruns on every takeover) is no progress;
    /// a stage done for the first time starts the count again.
    @Test func deathsWithoutProgressReachTheLimitAndOnlyANewStageResetsTheCount() async throws {
        let (server, database, item) = try await PostgresStoreTests.queuedItem()
        let queue = BatchQueue(database: database)
        let ref = ItemVersion(item: item, version: 1)
        let first = try #require(try await queue.claim(for: "w1", lease: .seconds(60), limit: 2))
        #expect(first.takeovers == 0 && !first.suspect && !first.abandoned)
        try await Self.store(of: first, in: database).save(Self.succeeded("secret"), for: ref)
        try await Self.expire(item: item, in: database)

        let second = try #require(try await queue.claim(for: "w2", lease: .seconds(60), limit: 2))
        #expect(second.takenOverFrom == "w1" && second.takeovers == 1 && second.suspect && !second.abandoned)
        // The secret stage runs again on the new worker: done before, so no progress.
        try await Self.store(of: second, in: database).save(Self.succeeded("secret"), for: ref)
        try await Self.expire(item: item, in: database)

        let third = try #require(try await queue.claim(for: "w3", lease: .seconds(60), limit: 3))
        #expect(third.takeovers == 2 && !third.abandoned, "a rerun stage reset the count: \(third.takeovers)")
        // A stage done for the first time since the item was queued is progress.
        try await Self.store(of: third, in: database).save(Self.succeeded("encode"), for: ref)
        try await Self.expire(item: item, in: database)
        let fourth = try #require(try await queue.claim(for: "w4", lease: .seconds(60), limit: 2))
        #expect(fourth.takeovers == 1 && !fourth.abandoned, "progress did not reset the count")
        try await Self.expire(item: item, in: database)
        let fifth = try #require(try await queue.claim(for: "w5", lease: .seconds(60), limit: 2))
        #expect(fifth.takeovers == 2 && fifth.abandoned)
        await database.close()
        try await server.stop()
    }

    /// A worker running two items dies: neither takeover counts. A worker running something else takes one over
    /// at once (crash recovery waits for no idle worker), which makes it suspect; once it dies too, a worker
    /// running something claims nothing while that suspect item waits, and a worker running nothing else takes it
    /// first and holds it alone: its death counts against that item only.
    @Test func aDeathBesideOtherItemsCountsAgainstNoneAndSuspectItemsRunAlone() async throws {
        let (server, database, held) = try await SegmentQueueTests.claimedItems(["/poison.mp4", "/healthy.mp4"])
        let queue = BatchQueue(database: database)
        for item in held.keys { try await Self.expire(item: item, in: database) }
        // "planner" claimed both with the defaults (a lone job); make its leases those of a worker with two jobs.
        try await database.rows("hold beside each other", "UPDATE items SET alone_generation = NULL")

        let recovered = try #require(
            try await queue.claim(for: "busy", lease: .seconds(60), alone: false, staysAlone: false, limit: 1),
            "a worker running another item did not take over a dead worker's item")
        #expect(recovered.takenOverFrom == "planner" && recovered.takeovers == 0 && recovered.suspect)
        try await Self.expire(item: recovered.item.id, in: database)
        // While the suspect item waits, a busy worker still takes over the other dead worker's item.
        let beside = try #require(
            try await queue.claim(for: "busy2", lease: .seconds(60), alone: false, staysAlone: false),
            "a worker running another item did not take over a dead worker's item while a suspect item waits")
        #expect(beside.item.id != recovered.item.id && beside.takenOverFrom == "planner")
        #expect(
            try await queue.claim(for: "busy3", lease: .seconds(60), alone: false, staysAlone: false) == nil,
            "a worker running another item claimed a suspect item")
        let poison = try #require(
            try await queue.claim(for: "free", lease: .seconds(60), alone: true, staysAlone: false, limit: 1))
        #expect(poison.item.id == recovered.item.id, "a lone worker did not take the suspect item first")
        #expect(poison.takenOverFrom == "busy" && poison.takeovers == 0 && poison.suspect && !poison.abandoned)
        try await Self.expire(item: poison.item.id, in: database)
        try await Self.expire(item: beside.item.id, in: database)
        let healthy = try #require(
            try await queue.claim(
                for: "other", lease: .seconds(60), excludingItems: [poison.item.id], alone: true, staysAlone: false,
                limit: 1))
        #expect(healthy.takeovers == 0 && !healthy.abandoned, "the healthy item was charged the death beside it")
        let again = try #require(
            try await queue.claim(for: "next", lease: .seconds(60), alone: true, staysAlone: false, limit: 1))
        #expect(again.item.id == poison.item.id && again.takeovers == 1 && again.abandoned)
        await database.close()
        try await server.stop()
    }

    /// While a suspect item waits for a worker to drain, a busy worker still takes over a dead worker's item that
    /// is not suspect (crash recovery waits for nobody), but no fresh item: that one waits, so the worker drains.
    @Test func aBusyWorkerTakesOverADeadWorkersItemWhileASuspectItemWaits() async throws {
        let (server, database, held) = try await SegmentQueueTests.claimedItems([
            "/poison.mp4", "/dead.mp4", "/new.mp4",
        ])
        let queue = BatchQueue(database: database)
        let ids = held.keys.sorted()
        try #require(ids.count == 3)
        // The suspect item comes last by id: a lone worker takes it first all the same.
        let (fresh, dead, poison) = (ids[0], ids[1], ids[2])
        for item in [poison, dead] { try await Self.expire(item: item, in: database) }
        try await database.rows(
            "make one item suspect and one fresh",
            """
            UPDATE items SET suspect = (id = \(poison)), alone_generation = NULL,
                lease_owner = CASE WHEN id = \(fresh) THEN NULL ELSE lease_owner END,
                lease_expires = CASE WHEN id = \(fresh) THEN NULL ELSE lease_expires END
            """)
        let recovered = try #require(
            try await queue.claim(for: "busy", lease: .seconds(60), alone: false, staysAlone: false),
            "a busy worker did not take over a dead worker's item while a suspect item waits")
        #expect(recovered.item.id == dead && recovered.takenOverFrom == "planner" && recovered.takeovers == 0)
        #expect(
            try await queue.claim(
                for: "busy", lease: .seconds(60), excludingItems: [dead], alone: false, staysAlone: false)
                == nil,
            "a busy worker claimed a fresh or suspect item while a suspect item waits")
        let lone = try #require(try await queue.claim(for: "idle", lease: .seconds(60), alone: true, staysAlone: false))
        #expect(lone.item.id == poison, "a lone worker did not take the suspect item before the fresh one")
        await database.close()
        try await server.stop()
    }

    /// A suspect item held alone keeps its lone hold until it makes progress; then the hold ends, and a later death
    /// of its worker (which may run other items by then) counts nothing.
    @Test func progressEndsTheLoneHoldOfASuspectItem() async throws {
        let (server, database, item) = try await PostgresStoreTests.queuedItem()
        let queue = BatchQueue(database: database)
        _ = try #require(try await queue.claim(for: "w1", lease: .seconds(60), alone: false, staysAlone: false))
        try await Self.expire(item: item, in: database)
        let suspect = try #require(
            try await queue.claim(for: "w2", lease: .seconds(60), alone: true, staysAlone: false, limit: 1))
        #expect(suspect.suspect)
        #expect(try await !queue.endLoneHold(of: item, generation: suspect.generation), "no progress yet")
        try await Self.store(of: suspect, in: database).save(
            Self.succeeded("decode"), for: ItemVersion(item: item, version: 1))
        #expect(try await queue.endLoneHold(of: item, generation: suspect.generation))
        try await Self.expire(item: item, in: database)
        let next = try #require(
            try await queue.claim(for: "w3", lease: .seconds(60), alone: true, staysAlone: false, limit: 1))
        #expect(next.takeovers == 0 && !next.abandoned, "a death after the lone hold ended was counted")
        await database.close()
        try await server.stop()
    }

    /// PostgreSQL restarted after a worker last renewed its lease: the lease that ran out meanwhile is taken over
    /// without counting and without making the item suspect (the worker may be alive, cut off by the restart). The
    /// control, without a restart, counts the same lease's end as a death.
    @Test(arguments: [true, false]) func aLeaseThatRanOutAcrossADatabaseRestartCountsNothing(restart: Bool)
        async throws
    {
        let (server, database, item) = try await PostgresStoreTests.queuedItem()
        let queue = BatchQueue(database: database)
        let first = try #require(try await queue.claim(for: "w1", lease: .seconds(60)))
        // The holder's last renewal: a lease of 1 s, recorded with the worker.
        _ = try await queue.heartbeat(
            WorkerRecord(id: "w1", host: "h", pid: 2), holding: [item: first.generation], lease: .seconds(1),
            patience: .seconds(10))
        try await waitUntil("the lease ran out") {
            let rows = try await database.rows(
                "read the lease", "SELECT lease_expires < now() FROM items WHERE id = \(item)")
            return try rows.first?.decode(Bool.self) == true
        }
        if restart { try await server.restart() }
        let second = try #require(
            try await queue.claim(for: "w2", lease: .seconds(60), alone: false, staysAlone: false, limit: 1))
        #expect(second.takenOverFrom == "w1")
        if restart {
            #expect(second.takeovers == 0 && !second.suspect && !second.abandoned, "a restart counted as a death")
        } else {
            #expect(second.takeovers == 1 && second.suspect && second.abandoned, "a death without restart not counted")
        }
        await database.close()
        try await server.stop()
    }

    /// A restart while the lease still runs counts nothing either, with no `workers` row to say how long the
    /// holder's lease was (pruned from the dashboard, or never written): the moment of the last renewal is the item's.
    @Test func aRestartWhileTheLeaseRanCountsNothingWithoutTheWorkersRow() async throws {
        let (server, database, item) = try await PostgresStoreTests.queuedItem()
        let queue = BatchQueue(database: database)
        let first = try #require(try await queue.claim(for: "w1", lease: .seconds(2)))
        let workers = try await database.rows("look for the holder", "SELECT 1 FROM workers WHERE id = 'w1'")
        #expect(workers.isEmpty, "the holder has a workers row")
        try await server.restart()
        try await waitUntil("the lease ran out") {
            let rows = try await database.rows(
                "read the lease", "SELECT lease_expires < now() FROM items WHERE id = \(item)")
            return try rows.first?.decode(Bool.self) == true
        }
        let second = try #require(try await queue.claim(for: "w2", lease: .seconds(60), limit: 1))
        #expect(second.takenOverFrom == "w1" && second.generation == first.generation + 1)
        #expect(second.takeovers == 0 && !second.suspect && !second.abandoned, "a restart counted as a death")
        await database.close()
        try await server.stop()
    }

    /// Queueing an abandoned item again (submit --failed, the dashboard's retry) starts its count and its
    /// high-water mark again, and a holder whose lease ran out is dropped: queueing is not a takeover.
    @Test func queueingAgainStartsTheCountAgain() async throws {
        let (server, database, item) = try await PostgresStoreTests.queuedItem()
        let queue = BatchQueue(database: database)
        let first = try #require(try await queue.claim(for: "w1", lease: .seconds(60)))
        try await Self.store(of: first, in: database).save(
            Self.succeeded("a"), for: ItemVersion(item: item, version: 1))
        try await Self.expire(item: item, in: database)
        let second = try #require(try await queue.claim(for: "w2", lease: .seconds(60), limit: 1))
        #expect(second.abandoned)
        let result = ItemResult(
            ref: ItemVersion(item: item, version: 1), fingerprint: "full:10:aa", path: "/media/a.mp4",
            outcome: .failed, reason: "abandoned", errorKind: .abandoned, bytes: 10)
        try await Self.store(of: second, in: database).finish(
            ItemVersion(item: item, version: 1), result: result, digest: nil)
        #expect(try await queue.retryFailed(item))
        let retried = try #require(try await queue.claim(for: "w3", lease: .seconds(60), limit: 1))
        #expect(retried.takenOverFrom == nil && retried.takeovers == 0 && !retried.suspect)
        try await Self.expire(item: item, in: database)
        let rows = try await database.rows("read the mark", "SELECT cardinality(done_stages) FROM items")
        #expect(try rows.first?.decode(Int32.self) == 0, "the high-water mark outlived the retry")

        let workflow = try await queue.store(
            SubmittedWorkflow(
                name: "w", file: "/w.json", document: Data("{}".utf8), vars: [:], digest: "d", stages: ["s"]))
        try await queue.enqueue([item: "d"], with: workflow)
        let requeued = try #require(try await queue.claim(for: "w4", lease: .seconds(60), limit: 1))
        #expect(requeued.takenOverFrom == nil && requeued.takeovers == 0 && !requeued.abandoned)
        await database.close()
        try await server.stop()
    }

    /// A segment unit whose worker died alone is counted as an item is; at the limit it is given up (marked
    /// abandoned, its attempts used up for older workers) and the claim takes the next unit. A takeover is not an
    /// attempt. Queueing the item again (`submit --failed`, or the dashboard's retry of the failed item: `retry`)
    /// gives the unit back its count and its attempts.
    @Test(arguments: [false, true]) func aUnitReachingTheLimitIsAbandonedAndQueueingAgainGivesItBack(retry: Bool)
        async throws
    {
        let (server, database, held) = try await SegmentQueueTests.claimedItems(["/long.mp4"])
        let (item, generation) = try #require(held.first)
        let segments = SegmentQueue(database: database)
        _ = try await segments.publish(
            SegmentQueueTests.plan("p", input: "/long.mp4", seconds: 15), item: item, generation: generation)
        @Sendable func expireUnits() async throws {
            try await database.rows(
                "end the units' leases",
                "UPDATE segment_units SET lease_expires = now() - interval '1 millisecond' WHERE status = 'running'")
        }
        let first = try #require(
            try await segments.claim(for: "w1", lease: .seconds(60), encoder: "x264-164", limit: 2))
        try await expireUnits()
        // Crash recovery waits for nobody: a worker running something else takes the dead worker's unit over. The
        // death counts (w1 held it alone) and makes the unit suspect; the busy worker does not hold it alone.
        let busy = try #require(
            try await segments.claim(
                for: "busy", lease: .seconds(60), encoder: "x264-164", by: .freeJob(alone: false, staysAlone: false),
                limit: 2))
        #expect(busy.unit == first.unit && busy.takenOverFrom == "w1" && busy.suspect)
        try await expireUnits()
        // Once suspect, the unit is left to a worker that runs nothing else.
        let other = try await segments.claim(
            for: "busy2", lease: .seconds(60), encoder: "x264-164", by: .freeJob(alone: false, staysAlone: false),
            limit: 2)
        #expect(other?.unit != first.unit, "a worker running another job took a suspect unit")
        try await database.rows(
            "give the other unit back",
            "UPDATE segment_units SET status = 'queued', lease_owner = NULL WHERE lease_owner = 'busy2'")
        // The busy worker's death counts nothing: it did not hold the unit alone.
        let second = try #require(
            try await segments.claim(for: "w2", lease: .seconds(60), encoder: "x264-164", limit: 2))
        #expect(second.unit == first.unit && second.takenOverFrom == "busy" && second.suspect)
        let attempts = try await segments.units(of: "p").first { $0.unit == first.unit }?.attempts
        #expect(attempts == 1, "a takeover counted as an attempt: \(attempts ?? -1)")
        try await expireUnits()
        // w2 held it alone: its death is the second counted one, the limit.
        let third = try await segments.claim(for: "w3", lease: .seconds(60), encoder: "x264-164", limit: 2)
        #expect(third?.unit != first.unit, "the unit was claimed again past the limit")
        let given = try #require(try await segments.units(of: "p").first { $0.unit == first.unit })
        #expect(given.abandoned && given.status == .queued && given.attempts >= SegmentUnitState.attemptLimit)

        let queue = BatchQueue(database: database)
        if retry {
            let leases = LeaseBook()
            leases.hold(item, generation: generation)
            let version = ItemVersion(item: item, version: 1)
            let result = ItemResult(
                ref: version, fingerprint: "full:10:0", path: "/long.mp4", outcome: .failed, reason: "abandoned",
                errorKind: .abandoned, bytes: 10)
            try await PostgresStore(database: database, leases: leases).finish(version, result: result, digest: nil)
            #expect(try await queue.retryFailed(item))
        } else {
            let workflow = try await queue.store(
                SubmittedWorkflow(
                    name: "w", file: "/w.json", document: Data("{}".utf8), vars: [:], digest: "d", stages: ["s"]))
            try await queue.enqueue([item: "d"], with: workflow)
        }
        let back = try #require(try await segments.units(of: "p").first { $0.unit == first.unit })
        #expect(!back.abandoned && back.attempts == 0)
        await database.close()
        try await server.stop()
    }
}
