import Foundation
import PipelineKit
import PostgresNIO
import StageKit
import TestSupport
import Testing

@testable import SharedBatch

/// The counts a dashboard and `status --db` read from the tally triggers equal those counted over every item,
/// whatever the writes (admissions, the queue, status changes, forgets), after a fold, and for a database made
/// before the tallies existed.
@Suite struct ItemTalliesTests {
    @Test func theTalliesCountWhatTheItemsAre() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        let database = try await BatchDatabase(url: url)
        let store = PostgresStore(database: database)
        let queue = BatchQueue(database: database)
        var ids: [String: [Int64]] = [:]
        for workflow in ["w", "v"] {
            for index in 0..<12 {
                let input = InputItem(
                    path: "/m/\(workflow)\(index)", relativePath: "\(workflow)\(index)", size: Int64(100 + index),
                    modified: 0)
                let admitted = try await store.admit(
                    ItemAdmission(item: nil, newVersion: false, fingerprint: "full:\(index)", input: input),
                    workflow: workflow)
                ids[workflow, default: []].append(admitted.ref.item)
            }
        }
        let submitted = try await queue.store(
            SubmittedWorkflow(
                name: "w", file: "/w.json", document: Data("{}".utf8), vars: [:], digest: "d", stages: ["s"]))
        let w = try #require(ids["w"])
        let v = try #require(ids["v"])
        try await queue.enqueue(Dictionary(uniqueKeysWithValues: w.prefix(8).map { ($0, "d") }), with: submitted)
        _ = try #require(try await queue.claim(for: "worker", lease: .seconds(60)))
        _ = try #require(try await queue.claim(for: "worker", lease: .seconds(60)))
        // Outcomes in several statements and minutes, one item back to pending, one forgotten.
        try await database.rows(
            "finish",
            "UPDATE items SET status = 'succeeded', updated_at = now() - interval '3 minutes' WHERE id = ANY(\(Array(v.prefix(5))))"
        )
        try await database.rows(
            "finish",
            "UPDATE items SET status = 'succeeded', updated_at = now() - interval '1 minute' WHERE id = ANY(\(Array(v[5..<9])))"
        )
        try await database.rows(
            "fail", "UPDATE items SET status = 'failed', error = 'x' WHERE id = ANY(\(Array(v[9...])))")
        try await database.rows("retry", "UPDATE items SET status = 'pending' WHERE id = \(v[9])")
        try await database.rows("touch", "UPDATE items SET updated_at = now() WHERE id = \(v[0])")
        try await database.rows("forget", "DELETE FROM items WHERE id = \(v[10])")
        try await expectTalliesMatch(database)

        try await ItemTallies.fold(database)
        let rows = try await database.rows("count the changes", "SELECT count(*) FROM item_tally_changes")
        let keys = try await database.rows(
            "count the keys", "SELECT count(DISTINCT (workflow, status, queued, minute)) FROM item_tally_changes")
        #expect(try rows.map { try $0.decode(Int64.self) } == keys.map { try $0.decode(Int64.self) })
        try await expectTalliesMatch(database)

        // A database of a pipeline before the tallies: the first open makes and fills them.
        try await database.rows("downgrade", "DROP FUNCTION item_tally_change() CASCADE")
        try await database.rows("downgrade", "DROP TABLE item_tally_changes")
        await database.close()
        let reopened = try await BatchDatabase(url: url)
        try await expectTalliesMatch(reopened)
        await reopened.close()
        try await server.stop()
    }

    /// The tallies' counts (through `status --db`'s reading and the dashboard's) against a count of the items.
    private func expectTalliesMatch(_ database: BatchDatabase) async throws {
        var expected: [String: [String: Int]] = [:]
        var bytes: [String: [String: Int64]] = [:]
        for row in try await database.rows(
            "count the items",
            """
            SELECT workflow, status, queued_with IS NOT NULL, coalesce(lease_expires > now(), false), count(*),
                sum(size)::bigint
            FROM items GROUP BY 1, 2, 3, 4
            """)
        {
            let (workflow, status, queued, running, count, size) = try row.decode(
                (String, String, Bool, Bool, Int64, Int64).self)
            let key = queued ? (running ? "running" : "queued") : status
            expected[workflow, default: [:]][key, default: 0] += Int(count)
            bytes[workflow, default: [:]][status, default: 0] += size
        }
        let status = try await BatchQueue(database: database).status(listingFailed: false)
        let read = status.workflows.mapValues { counts in
            var flat = counts.byStatus.filter { $0.value != 0 }
            if counts.queued != 0 { flat["queued"] = counts.queued }
            if counts.running != 0 { flat["running"] = counts.running }
            return flat
        }
        #expect(read == expected)
        let tallies = try await PostgresStore(database: database).statusCounts()
        #expect(tallies.mapValues { $0.reduce(into: [:]) { $0[$1.key.rawValue] = $1.value.bytes } } == bytes)

        var minutes: [Date: Int] = [:]
        for row in try await database.rows(
            "count the items done",
            "SELECT date_trunc('minute', updated_at), count(*) FROM items WHERE workflow = 'v' AND status = 'succeeded' GROUP BY 1"
        ) {
            let (minute, count) = try row.decode((Date, Int64).self)
            minutes[minute] = Int(count)
        }
        let chart = try await PostgresStore(database: database).doneByMinute(workflow: "v", minutes: 120)
        #expect(Dictionary(uniqueKeysWithValues: chart.map { ($0.minute, $0.done) }) == minutes)
        #expect(minutes.count >= 2, "the items were done in different minutes")
    }
}
