public import Foundation
public import PipelineKit
import PostgresNIO
import StageKit

// The dashboard's reads (``LedgerBrowsing``) and the notifications sent (``NotificationLog``), with the meaning
// ``SQLiteLedger`` gives them.
extension PostgresStore: LedgerBrowsing, NotificationLog {
    public func statusCounts() async throws(StateError) -> [String: [ItemStatus: ItemTally]] {
        var counts: [String: [ItemStatus: ItemTally]] = [:]
        for tally in try await ItemTallies.read(database) {
            guard let status = ItemStatus(rawValue: tally.status) else { continue }
            let known = counts[tally.workflow]?[status] ?? ItemTally(count: 0, bytes: 0)
            counts[tally.workflow, default: [:]][status] = ItemTally(
                count: known.count + tally.items, bytes: known.bytes + tally.bytes)
        }
        return counts
    }

    public func item(_ id: Int64) async throws(StateError) -> (workflow: String, item: LedgerItem)? {
        let rows = try await database.rows(
            "read an item", "SELECT \(unescaped: Self.itemColumns), workflow FROM items WHERE id = \(id)")
        return try database.decoding("read an item") {
            try rows.first.map { row in
                let columns = try NamedColumns(row)
                let workflow: String = try columns["workflow"]
                return (workflow: workflow, item: try Self.item(columns))
            }
        }
    }

    public func doneByMinute(workflow: String, minutes: Int) async throws(StateError) -> [(minute: Date, done: Int)] {
        try await ItemTallies.doneByMinute(database, workflow: workflow, minutes: minutes)
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
                let (workflow, startedAt, finishedAt, text) = try row.decode((String, Date, Date, String?).self)
                let summary = text.flatMap { try? JSONValue(parsing: $0) }
                totals[workflow] = RunTotals(
                    startedAt: startedAt, finishedAt: finishedAt, skipped: summary?["skipped"]?.intValue ?? 0,
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
