public import Foundation
import GRDB
import StageKit

// The dashboard's reads (``LedgerBrowsing``) and the notifications sent (``NotificationLog``).
extension SQLiteLedger: LedgerBrowsing, NotificationLog {
    public func statusCounts() async throws(StateError) -> [String: [ItemStatus: ItemTally]] {
        try await read { db in
            var counts: [String: [ItemStatus: ItemTally]] = [:]
            let rows = try Row.fetchCursor(
                db, sql: "SELECT workflow, status, count, bytes FROM \(try Self.tallies(db).items) WHERE count > 0")
            while let row = try rows.next() {
                guard let status = ItemStatus(rawValue: row[1]) else { continue }
                counts[row[0] as String, default: [:]][status] = ItemTally(count: row[2], bytes: row[3])
            }
            return counts
        }
    }

    public func item(_ id: Int64) async throws(StateError) -> (workflow: String, item: LedgerItem)? {
        try await read { db in
            var found: (workflow: String, item: LedgerItem)?
            let statement = try db.makeStatement(sql: "SELECT \(Self.itemColumns), workflow FROM items WHERE id = ?")
            try SQLiteColumns.forEachRow(of: statement, arguments: [id]) { columns in
                found = (workflow: columns.text(13), item: Self.item(columns))
            }
            return found
        }
    }

    public func doneByMinute(workflow: String, minutes: Int) async throws(StateError) -> [(minute: Date, done: Int)] {
        try await read { db in
            let done = try Self.tallies(db).minutes
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT minute, count FROM \(done) AS done
                    WHERE workflow = ?1 AND count > 0 AND minute > (
                        SELECT max(minute) FROM \(done) AS done WHERE workflow = ?1 AND count > 0) - ?2
                    ORDER BY minute
                    """, arguments: [workflow, minutes]
            ).map { row in (Date(timeIntervalSince1970: Double(row[0] as Int64) * 60), row[1] as Int) }
        }
    }

    public func lastRunSummaries() async throws(StateError) -> [String: RunTotals] {
        try await read { db in
            var totals: [String: RunTotals] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT workflow, startedAt, finishedAt, summary FROM runs
                    WHERE id IN (SELECT max(id) FROM runs WHERE finishedAt IS NOT NULL GROUP BY workflow)
                    """)
            {
                let summary = (row[3] as String?).flatMap { try? JSONValue(parsing: $0) }
                totals[row[0]] = RunTotals(
                    startedAt: Date(timeIntervalSince1970: row[1]), finishedAt: Date(timeIntervalSince1970: row[2]),
                    skipped: summary?["skipped"]?.intValue ?? 0, bytes: Int64(summary?["bytes"]?.intValue ?? 0))
            }
            return totals
        }
    }

    public func runsUnderWay() async throws(StateError) -> [String: RunUnderWay] {
        // Only a run that still runs, by the run history's rule: a killed one's unstarted files are not coming.
        guard let heldSince = await folderHeldSince() else { return [:] }
        return try await read { db in
            // A ledger no writer of this version has opened yet has no plans to read.
            guard try db.columns(in: "runs").contains(where: { $0.name == "newItems" }) else { return [:] }
            var runs: [String: RunUnderWay] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT workflow, newItems, itemsBefore, startedAt FROM runs
                    WHERE id IN (SELECT max(id) FROM runs GROUP BY workflow)
                    AND finishedAt IS NULL AND newItems IS NOT NULL
                    """)
            where Self.stillRuns(startedAt: Date(timeIntervalSince1970: row[3]), heldSince: heldSince) {
                runs[row[0]] = RunUnderWay(newItems: row[1], itemsBefore: row[2] ?? 0)
            }
            return runs
        }
    }

    public func claimNotification(_ key: String) async throws(StateError) -> Bool {
        try await write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO notifications VALUES (?, ?)",
                arguments: [key, Date().timeIntervalSince1970])
            return db.changesCount > 0
        }
    }
}
