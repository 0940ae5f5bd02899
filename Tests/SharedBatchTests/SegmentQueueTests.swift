import Foundation
import NIOConcurrencyHelpers
import PipelineKit
import PostgresNIO
import StageKit
import StageRuntime
import TestSupport
import Testing

@testable import SharedBatch

/// The units of segmented encodes in a shared batch, against a real PostgreSQL: publishing, the order of claims,
/// leases and their fencing, the encoder filter, and the migration that adds the tables.
@Suite struct SegmentQueueTests {
    /// A plan of video units of 10 s over `seconds` (the first one `first` s, as a cut at a keyframe makes it; the
    /// last one what is left) and an audio unit over `seconds`.
    static func plan(
        _ id: String, input: String, seconds: Double, first: Double = 10, encoder: String = "x264-164"
    ) -> SegmentPlan {
        var units: [SegmentUnit] = []
        var start = 0.0
        while start < seconds {
            let end = min(seconds, start + (units.isEmpty ? first : 10))
            units.append(
                SegmentUnit(
                    index: units.count, kind: .video, start: start, end: end < seconds ? end : nil,
                    seconds: end - start))
            start = end
        }
        units.append(SegmentUnit(index: units.count, kind: .audio, start: 0, end: nil, seconds: seconds))
        return SegmentPlan(
            id: id, input: input, settings: ["crf": 23, "preset": "veryfast"], threads: 1, encoder: encoder,
            seconds: seconds, units: units)
    }

    /// A database with queued items at `paths`, claimed by worker "planner"; returns the items' ids and lease
    /// generations.
    static func claimedItems(_ paths: [String]) async throws -> (PostgresServer, BatchDatabase, [Int64: Int64]) {
        let server = try await PostgresServer.start()
        let database = try await BatchDatabase(url: try await server.createDatabase())
        let store = PostgresStore(database: database)
        let queue = BatchQueue(database: database)
        let workflow = try await queue.store(
            SubmittedWorkflow(
                name: "w", file: "/w.json", document: Data("{}".utf8), vars: [:], digest: "d", stages: ["s"]))
        var items: [Int64: String] = [:]
        for (index, path) in paths.enumerated() {
            let input = InputItem(path: path, relativePath: String(path.dropFirst()), size: 10, modified: 0)
            let admitted = try await store.admit(
                ItemAdmission(item: nil, newVersion: false, fingerprint: "full:10:\(index)", input: input),
                workflow: "w")
            items[admitted.ref.item] = "d"
        }
        try await queue.enqueue(items, with: workflow)
        var generations: [Int64: Int64] = [:]
        while let claim = try await queue.claim(for: "planner", lease: .seconds(60)) {
            generations[claim.item.id] = claim.generation
        }
        return (server, database, generations)
    }

    @Test func publishingIsIdempotentAndOnlyTheItemsHolderPublishes() async throws {
        let (server, database, held) = try await Self.claimedItems(["/long.mp4"])
        let (item, generation) = try #require(held.first)
        let segments = SegmentQueue(database: database)
        let plan = Self.plan("p1", input: "/long.mp4", seconds: 25)
        let units = try await segments.publish(plan, item: item, generation: generation)
        #expect(units.map(\.unit) == plan.units && units.allSatisfy { $0.status == .queued })

        let claim = try #require(try await segments.claim(for: "w2", lease: .seconds(60), encoder: "x264-164"))
        #expect(try await segments.complete(claim, by: "w2", size: 100, sha256: "ab"))
        let again = try await segments.publish(plan, item: item, generation: generation)
        #expect(again.filter { $0.status == .done }.count == 1, "publishing again keeps the units' progress")

        await #expect(throws: StateError.self, "a worker whose lease is not current cannot publish") {
            _ = try await segments.publish(Self.plan("p2", input: "/long.mp4", seconds: 25), item: item, generation: 0)
        }
        let outgoing = try await segments.otherPlans(of: item, than: "p3")
        #expect(outgoing == ["p1": plan.units], "the plan a new one replaces, whose segments the store may hold")
        #expect(try await segments.otherPlans(of: item, than: "p1").isEmpty)
        let replaced = try await segments.publish(
            Self.plan("p3", input: "/long.mp4", seconds: 15), item: item, generation: generation)
        #expect(replaced.count == 3 && replaced.allSatisfy { $0.status == .queued })
        #expect(try await segments.units(of: "p1").isEmpty, "a plan of the item with other settings is replaced")
        await database.close()
        try await server.stop()
    }

    @Test func unitsAreClaimedLongestSourceFirstAndOnlyForTheirEncoder() async throws {
        let (server, database, held) = try await Self.claimedItems(["/short.mp4", "/long.mp4"])
        let segments = SegmentQueue(database: database)
        let ids = held.keys.sorted()
        _ = try await segments.publish(
            Self.plan("short", input: "/short.mp4", seconds: 12), item: ids[0], generation: held[ids[0]] ?? 0)
        _ = try await segments.publish(
            Self.plan("long", input: "/long.mp4", seconds: 35, first: 8), item: ids[1], generation: held[ids[1]] ?? 0)

        #expect(try await segments.claim(for: "other", lease: .seconds(60), encoder: "x264-163") == nil)
        #expect(try await segments.openPlans(otherThan: "x264-163") == ["short": "x264-164", "long": "x264-164"])
        #expect(try await segments.openPlans(otherThan: "x264-164").isEmpty)
        var order: [String] = []
        while let claim = try await segments.claim(for: "w", lease: .seconds(60), encoder: "x264-164") {
            order.append("\(claim.plan.id)/\(claim.unit.kind.rawValue)\(claim.unit.index)")
            #expect(claim.plan.settings == ["crf": 23, "preset": "veryfast"] && claim.plan.threads == 1)
        }
        // The long source's units first: its audio, then its segments in order (8, 10, 10 and 7 s: the join appends
        // them in that order); then the short one's.
        #expect(
            order == [
                "long/audio4", "long/video0", "long/video1", "long/video2", "long/video3", "short/audio2",
                "short/video0", "short/video1",
            ])
        let ofShort = try await segments.claim(for: "w", lease: .seconds(60), encoder: "x264-164", in: "short")
        #expect(ofShort == nil, "every unit is held")
        let splits = try await segments.splits()
        #expect(splits.map(\.plan) == ["short", "long"] && splits.map(\.running) == [3, 5])
        await database.close()
        try await server.stop()
    }

    /// What an encode reports reaches `status --db` with the next renewal of its lease, while it runs.
    @Test func theFarmRecordsHowFarAUnitsEncodeIsWithItsLease() async throws {
        let (server, database, held) = try await Self.claimedItems(["/a.mp4"])
        let (item, generation) = try #require(held.first)
        let segments = SegmentQueue(database: database)
        _ = try await segments.publish(Self.plan("p", input: "/a.mp4", seconds: 10), item: item, generation: generation)
        let farm = WorkerSegmentFarm(
            database: database, worker: "w", settings: WorkerSettings(lease: .milliseconds(900)), leases: LeaseBook(),
            encoder: "x264-164",
            sink: QuietSink())
        let renewing = Task { await farm.run() }
        defer { renewing.cancel() }
        let claim = try #require(try await farm.claim(in: "p"))
        try await farm.whileHolding(claim) { report in
            report(0.25)
            try await waitUntil("the quarter is recorded") {
                try await segments.splits().first?.encoding.map(\.progress) == [0.25]
            }
        }
        let split = try #require(try await segments.splits().first)
        #expect(split.encoding.map(\.worker) == ["w"] && split.encoding.map(\.unit) == [claim.unit.index])
        renewing.cancel()
        await database.close()
        try await server.stop()
    }

    @Test func aLapsedUnitIsTakenOverAndTheFirstWorkersCompletionRefused() async throws {
        let (server, database, held) = try await Self.claimedItems(["/a.mp4"])
        let (item, generation) = try #require(held.first)
        let segments = SegmentQueue(database: database)
        _ = try await segments.publish(Self.plan("p", input: "/a.mp4", seconds: 10), item: item, generation: generation)
        let first = try #require(
            try await segments.claim(for: "first", lease: .seconds(1), encoder: "x264-164", in: "p"))
        let box = NIOLockedValueBox<SegmentUnitClaim?>(nil)
        try await waitUntil("the unit's lease lapsed and another worker claimed it") {
            let claim = try await segments.claim(for: "second", lease: .seconds(60), encoder: "x264-164", in: "p")
            if claim?.unit == first.unit { box.withLockedValue { $0 = claim } }
            return box.withLockedValue { $0 } != nil
        }
        let second = try #require(box.withLockedValue { $0 })
        #expect(second.takenOverFrom == "first" && second.generation == first.generation + 1)
        let stale = HeldUnit(claim: first, progress: 0.9)
        #expect(try await segments.renew([stale], for: "first", lease: .seconds(60)) == [first])
        let live = HeldUnit(claim: second, progress: 0.5)
        #expect(try await segments.renew([live], for: "second", lease: .seconds(60)).isEmpty)
        // Status shows the live holder's progress, not the stale one's, weighed by the unit's share of the plan.
        let split = try #require(try await segments.splits().first)
        let taken = split.encoding.first { $0.unit == second.unit.index }
        #expect(taken?.worker == "second" && taken?.progress == 0.5, "\(split)")
        #expect(!split.encoding.contains { $0.worker == "first" }, "\(split)")
        let planSeconds = try await segments.units(of: "p").map(\.unit.seconds).reduce(0, +)
        #expect(abs(split.progress - 0.5 * second.unit.seconds / planSeconds) < 1e-9, "\(split)")
        #expect(!(try await segments.complete(first, by: "first", size: 1, sha256: "old")))
        #expect(try await segments.complete(second, by: "second", size: 2, sha256: "new"))
        let unit = try #require(try await segments.units(of: "p").first { $0.unit == first.unit })
        // A takeover is not an attempt (the takeover limit rules those): one claim counted.
        #expect(unit.status == .done && unit.worker == "second" && unit.sha256 == "new" && unit.attempts == 1)

        try await segments.requeue(plan: "p", unit: unit.unit.index)
        let requeued = try #require(try await segments.units(of: "p").first { $0.unit == first.unit })
        #expect(requeued.status == .queued && requeued.sha256 == nil)
        await database.close()
        try await server.stop()
    }

    @Test func unitsOfCancelledOrForgottenItemsAreLeftAlone() async throws {
        let (server, database, held) = try await Self.claimedItems(["/a.mp4", "/b.mp4"])
        let segments = SegmentQueue(database: database)
        let ids = held.keys.sorted()
        _ = try await segments.publish(
            Self.plan("a", input: "/a.mp4", seconds: 10), item: ids[0], generation: held[ids[0]] ?? 0)
        _ = try await segments.publish(
            Self.plan("b", input: "/b.mp4", seconds: 10), item: ids[1], generation: held[ids[1]] ?? 0)
        let store = PostgresStore(database: database)
        try await store.requestCancel(of: [ids[0]])
        try await store.forget(items: [ids[1]])
        #expect(try await segments.claim(for: "w", lease: .seconds(60), encoder: "x264-164") == nil)
        #expect(try await segments.units(of: "b").isEmpty, "forgetting an item removes its plan")
        try await segments.retire("a")
        #expect(try await segments.units(of: "a").isEmpty)
        #expect(try await segments.splits().isEmpty)
        await database.close()
        try await server.stop()
    }

    @Test func aVersionOneDatabaseGainsTheSegmentTables() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        let database = try await BatchDatabase(url: url)
        try await database.rows("downgrade", "DROP TABLE segment_units, segment_plans")
        try await database.rows("downgrade", "UPDATE pipeline_schema SET version = 1")
        await database.close()

        let reopened = try await BatchDatabase(url: url)
        let versions = try await reopened.rows("read the schema version", "SELECT version FROM pipeline_schema")
        #expect(try versions.map { try $0.decode(Int32.self) } == [BatchSchema.version])
        #expect(try await SegmentQueue(database: reopened).splits().isEmpty, "the segment tables exist")
        await reopened.close()
        try await server.stop()
    }
}
