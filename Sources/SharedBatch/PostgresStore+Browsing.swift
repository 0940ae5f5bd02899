public import Foundation
public import PipelineKit
import PostgresNIO
import StageKit

// The dashboard's reads (``LedgerBrowsing``) and the notifications sent (``NotificationLog``), with the meaning
// ``SQLiteLedger`` gives them.
extension PostgresStore: LedgerBrowsing, NotificationLog {
    public func statusCounts() async throws(StateError) -> [String: [ItemStatus: ItemTally]] {
        let rows = try await database.rows(
            "count the items",
            "SELECT workflow, status, count(*), coalesce(sum(size), 0)::bigint FROM items GROUP BY 1, 2")
        return try database.decoding("count the items") {
            var counts: [String: [ItemStatus: ItemTally]] = [:]
            for row in rows {
                let columns = Columns(row)
                guard let status = ItemStatus(rawValue: try columns[1]) else { continue }
                counts[try columns[0] as String, default: [:]][status] = ItemTally(
                    count: Int(try columns[2] as Int64), bytes: try columns[3])
            }
            return counts
        }
    }

    public func items(workflow: String, status: ItemStatus?, limit: Int) async throws(StateError) -> [LedgerItem] {
        let query: PostgresQuery =
            if let status {
                """
                SELECT \(unescaped: Self.itemColumns) FROM items WHERE workflow = \(workflow)
                AND status = \(status.rawValue) ORDER BY updated_at DESC LIMIT \(limit)
                """
            } else {
                """
                SELECT \(unescaped: Self.itemColumns) FROM items WHERE workflow = \(workflow)
                ORDER BY updated_at DESC LIMIT \(limit)
                """
            }
        let rows = try await database.rows("read the items", query)
        return try database.decoding("read the items") { try rows.map(Self.item) }
    }

    public func item(_ id: Int64) async throws(StateError) -> (workflow: String, item: LedgerItem)? {
        let rows = try await database.rows(
            "read an item", "SELECT \(unescaped: Self.itemColumns), workflow FROM items WHERE id = \(id)")
        return try database.decoding("read an item") {
            try rows.first.map { row in (workflow: try Columns(row)[13] as String, item: try Self.item(row)) }
        }
    }

    public func doneByMinute(workflow: String, minutes: Int) async throws(StateError) -> [(minute: Date, done: Int)] {
        let rows = try await database.rows(
            "count the items done",
            """
            SELECT date_trunc('minute', updated_at), count(*) FROM items
            WHERE workflow = \(workflow) AND status = 'succeeded' AND updated_at >= (
                SELECT date_trunc('minute', max(updated_at)) - make_interval(mins => \(Int32(minutes)) - 1) FROM items
                WHERE workflow = \(workflow) AND status = 'succeeded')
            GROUP BY 1 ORDER BY 1
            """)
        return try database.decoding("count the items done") {
            try rows.map { row in
                let columns = Columns(row)
                return (try columns[0] as Date, Int(try columns[1] as Int64))
            }
        }
    }

    public func lastRunSummaries() async throws(StateError) -> [String: RunTotals] {
        let rows = try await database.rows(
            "read the runs",
            """
            SELECT workflow, started_at, finished_at, summary FROM runs
            WHERE id IN (SELECT max(id) FROM runs WHERE finished_at IS NOT NULL GROUP BY workflow)
            """)
        return try database.decoding("read the runs") {
            var totals: [String: RunTotals] = [:]
            for row in rows {
                let columns = Columns(row)
                let summary = (try columns[3] as String?).flatMap { try? JSONValue(parsing: $0) }
                totals[try columns[0]] = RunTotals(
                    startedAt: try columns[1], finishedAt: try columns[2], skipped: summary?["skipped"]?.intValue ?? 0,
                    bytes: Int64(summary?["bytes"]?.intValue ?? 0))
            }
            return totals
        }
    }

    public func claimNotification(_ key: String) async throws(StateError) -> Bool {
        let rows = try await database.rows(
            "record a notification",
            "INSERT INTO notifications(key) VALUES (\(key)) ON CONFLICT (key) DO NOTHING RETURNING key")
        return !rows.isEmpty
    }
}
