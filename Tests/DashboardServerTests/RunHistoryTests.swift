import Foundation
import Hummingbird
import HummingbirdTesting
import PipelineKit
import SharedBatch
import StageKit
import TestSupport
import Testing

@testable import Dashboard

/// The run history (`GET /api/runs`): a state folder's runs and a shared batch's submissions (on a real PostgreSQL),
/// newest first, in pages, with their counts, bytes and outcome, and the items done per minute over their span.
@Suite struct RunHistoryTests {
    static let postgres = Task { try await PostgresServer.start() }

    static func summary(succeeded: Int = 0, failed: Int = 0, items: Int, bytes: Int64 = 0) -> RunSummary {
        var summary = RunSummary(items: items)
        (summary.succeeded, summary.failed, summary.bytes) = (succeeded, failed, bytes)
        return summary
    }

    /// The runs' outcomes and counts in the order listed.
    static func listed(_ runs: JSONValue) -> [String] {
        (runs["runs"]?.arrayValue ?? []).map { run in
            let counts = (run["counts"]?.objectValue ?? [:]).sorted { $0.key < $1.key }
                .map { "\($0.key)=\($0.value.intValue ?? -1)" }.joined(separator: ",")
            return "\(run["workflow"]?.stringValue ?? "?") \(run["outcome"]?.stringValue ?? "?") \(counts)"
        }
    }

    /// Four runs of a state folder, one of each ending: finished with its items done, with a failed item, stopped by
    /// a signal, and killed (never finished, the folder held by nobody). A run under way reads as running while its
    /// process holds the folder, and as interrupted once the lock is gone, as after a `kill -9`.
    @Test func aStateFoldersRunsWithTheirOutcomes() async throws {
        let fixture = try LedgerFixture()
        defer { fixture.remove() }
        let ledger = fixture.ledger
        func run() async throws -> Int64 {
            try await ledger.beginRun(
                RunRecord(workflow: "w", file: "w.json", stages: ["a"]), caching: [], sightings: [])
        }
        let first = try await run()
        for name in ["a.mov", "b.mov"] {
            let item = ItemVersion(item: try await fixture.admit(name), version: 1)
            let result = ItemResult(ref: item, fingerprint: nil, path: "", outcome: .done, reason: nil, bytes: 10)
            try await ledger.finish(item, result: result, digest: "d")
        }
        try await ledger.finishRun(first, summary: Self.summary(succeeded: 2, items: 2, bytes: 20))
        try await ledger.finishRun(try await run(), summary: Self.summary(succeeded: 1, failed: 1, items: 2))
        var stopped = Self.summary(items: 2)
        stopped.interrupted = true
        try await ledger.finishRun(try await run(), summary: stopped)
        _ = try await run()
        try await fixture.application().test(.router) { client in
            let runs = try await ListingTests.get(client, "/api/runs")
            #expect(
                Self.listed(runs) == [
                    "w interrupted ", "w cancelled done=0,failed=0,reused=0,skipped=0",
                    "w failed items done=1,failed=1,reused=0,skipped=0",
                    "w finished done=2,failed=0,reused=0,skipped=0",
                ], "\(runs)")
            #expect(runs["total"] == 4 && runs["runs"]?.arrayValue?.last?["bytes"] == 20)
            #expect(runs["runs"]?.arrayValue?.first?["finishedAt"] == .null)
            // The two items done are in the chart, whose span covers the runs.
            let throughput = try #require(runs["throughput"])
            let minutes = throughput["bucketMinutes"]?.intValue ?? 0
            let done = (throughput["points"]?.arrayValue ?? []).reduce(0.0) {
                $0 + ($1.arrayValue?.last?.doubleValue ?? 0) * Double(minutes)
            }
            #expect(done == 2, "\(throughput)")
            let page = try await ListingTests.get(client, "/api/runs?limit=2&offset=2")
            #expect(Self.listed(page).map { $0.prefix(10) } == ["w failed i", "w finished"], "\(page)")
            #expect(page["total"] == 4 && page["offset"] == 2)
        }
        var lock: StateLock? = try StateLock(folder: fixture.folder)
        let underWay = try await run()
        try await fixture.application().test(.router) { client in
            let runs = try await ListingTests.get(client, "/api/runs?limit=1")
            #expect(runs["runs"]?.arrayValue?.first?["id"]?.intValue == Int(underWay))
            #expect(runs["runs"]?.arrayValue?.first?["outcome"] == "running", "\(runs)")
        }
        withExtendedLifetime(lock) {}
        lock = nil
        try await fixture.application().test(.router) { client in
            let runs = try await ListingTests.get(client, "/api/runs?limit=1")
            #expect(runs["runs"]?.arrayValue?.first?["outcome"] == "interrupted", "\(runs)")
        }
    }

    /// A shared batch's submissions: what each queued, found done, skipped or refused, and the bytes it queued; one
    /// that never finished is running while its lock is held, and interrupted otherwise, whether or not a later
    /// submission of its workflow was made.
    @Test func aSharedBatchsSubmissions() async throws {
        let database = try await BatchDatabase(url: try await Self.postgres.value.createDatabase())
        let store = PostgresStore(database: database)
        func submission(_ workflow: String) async throws -> Int64 {
            try await store.beginRun(
                RunRecord(workflow: workflow, file: "\(workflow).json", stages: ["a"]), caching: [], sightings: [])
        }
        var totals = Self.summary(items: 5, bytes: 20)
        (totals.reused, totals.skipped) = (1, 1)
        try await store.finishRun(try await submission("w"), summary: totals)
        _ = try await submission("w")
        try await store.finishRun(try await submission("w"), summary: Self.summary(failed: 1, items: 1))
        let underWay = try await submission("v")
        // While its process holds its lock (as `pipeline submit` does), a submission is running; without, interrupted.
        let held = try await store.holdingSubmission(underWay) { () async throws(StateError) in
            try await store.pastRuns(limit: 1, offset: 0).runs.map(\.outcome)
        }
        #expect(held == [.running])
        let router = DashboardServer.router(
            source: .sharedBatch(database), host: "127.0.0.1", access: DashboardAccess())
        try await Application(router: router).test(.router) { client in
            let runs = try await ListingTests.get(client, "/api/runs")
            #expect(
                Self.listed(runs) == [
                    "v interrupted ", "w failed items failed=1,queued=0,reused=0,skipped=0", "w interrupted ",
                    "w finished failed=0,queued=3,reused=1,skipped=1",
                ], "\(runs)")
            #expect(runs["total"] == 4 && runs["runs"]?.arrayValue?.last?["bytes"] == 20)
        }
        await database.close()
    }

    /// The chart ends at the newest run's end: an interrupted run (killed a month ago) ends at its start, not now;
    /// only a run under way reaches now.
    @Test func anInterruptedRunEndsTheChartAtItsStart() async throws {
        let fixture = try LedgerFixture()
        defer { fixture.remove() }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let start = now.addingTimeInterval(-30 * 86_400)
        func run(_ outcome: PastRun.Outcome) -> PastRun {
            PastRun(
                id: 1, workflow: "w", startedAt: start, finishedAt: nil, counts: [:], bytes: 0, outcome: outcome)
        }
        for (outcome, end) in [(PastRun.Outcome.interrupted, start.addingTimeInterval(60)), (.running, now)] {
            let chart = try await DashboardRoutes.throughput(
                fixture.ledger, over: [run(outcome)], now: now, reachingNow: false)
            #expect(chart["to"]?.stringValue == end.formatted(.iso8601), "\(outcome): \(chart)")
        }
    }

    /// A parameter the history does not take is answered with 400 and why.
    @Test func unknownParametersAreRefused() async throws {
        let fixture = try LedgerFixture()
        defer { fixture.remove() }
        try await fixture.application().test(.router) { client in
            for query in ["status=failed", "limit=0", "limit=101", "offset=-1", "limit=ten"] {
                let response = try await client.execute(uri: "/api/runs?\(query)", method: .get)
                #expect(response.status == .badRequest, "\(query)")
                #expect(String(buffer: response.body).contains("error"), "\(query)")
            }
            let empty = try await ListingTests.get(client, "/api/runs?limit=100&offset=")
            #expect(empty["runs"] == [] && empty["total"] == 0 && empty["throughput"] == .null, "\(empty)")
        }
    }
}
