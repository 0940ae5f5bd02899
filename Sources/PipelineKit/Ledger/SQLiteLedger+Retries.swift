import Foundation
import GRDB
import StageKit

// Retry requests in the ledger's table `retryRequests`: a failed item a dashboard asked to run again, one row per
// item, going with its item (ON DELETE CASCADE). A `pipeline watch` holding the folder runs them at once (it forgets
// that their files failed); any run answers the requests of the items it takes up.
extension SQLiteLedger {
    /// The table of retry requests, added within schema 1: a pipeline that does not know it ignores it (and runs
    /// failed items again anyway); a writer of this version adds it to a ledger an earlier one made.
    static let retryRequestsTable = """
        CREATE TABLE IF NOT EXISTS retryRequests(
            item INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE, requestedAt REAL NOT NULL);
        """

    /// Asks for these items to run again; returns those that were failed, the only ones asked for.
    public func requestRetry(of items: [Int64]) async throws(StateError) -> Set<Int64> {
        guard !items.isEmpty else { return [] }
        let marks = Array(repeating: "?", count: items.count).joined(separator: ", ")
        return try await requestRetry(where: "id IN (\(marks))", StatementArguments(items))
    }

    /// Asks for every failed item `query` selects (its filters; not its order or page) to run again; returns them.
    public func requestRetry(matching query: ItemQuery) async throws(StateError) -> Set<Int64> {
        let (condition, arguments) = Self.condition(of: query)
        return try await requestRetry(where: condition, arguments)
    }

    private func requestRetry(where condition: String, _ arguments: StatementArguments) async throws(StateError)
        -> Set<Int64>
    {
        try await write { db in
            Set(
                try Int64.fetchAll(
                    db,
                    sql: """
                        INSERT OR REPLACE INTO retryRequests
                        SELECT id, ? FROM items WHERE status = ? AND (\(condition)) RETURNING item
                        """,
                    arguments: [Date().timeIntervalSince1970, ItemStatus.failed.rawValue] + arguments))
        }
    }

    /// The items of a workflow whose retry was asked for and that are still failed (a request for an item a run took
    /// up since means nothing), with the paths of their files.
    public func retryRequests(workflow: String) async throws(StateError) -> [Int64: String] {
        try await read { db in
            // A ledger that no writer of this version has opened has no requests.
            guard try db.tableExists("retryRequests") else { return [:] }
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT items.id, items.path FROM retryRequests JOIN items ON items.id = retryRequests.item
                    WHERE items.workflow = ? AND items.status = ?
                    """, arguments: [workflow, ItemStatus.failed.rawValue])
            return Dictionary(rows.map { ($0[0] as Int64, $0[1] as String) }, uniquingKeysWith: { $1 })
        }
    }

    /// The workflow and the file's path of each of `items` the ledger holds.
    public func files(of items: Set<Int64>) async throws(StateError) -> [Int64: (workflow: String, path: String)] {
        guard !items.isEmpty else { return [:] }
        let marks = Array(repeating: "?", count: items.count).joined(separator: ", ")
        return try await read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, workflow, path FROM items WHERE id IN (\(marks))",
                arguments: StatementArguments(Array(items)))
            return Dictionary(
                rows.map { ($0[0] as Int64, (workflow: $0[1] as String, path: $0[2] as String)) },
                uniquingKeysWith: { $1 })
        }
    }

    /// Answers the retry requests of the items `plan` runs: a run takes them up (a failed item runs again from the
    /// stage that failed), so a request left now is one for after this run. Requests of items no longer failed go
    /// too: they were taken up (or cancelled) since.
    public func answerRetryRequests(takenUpBy plan: BatchPlan) async throws(StateError) {
        let items = plan.items.compactMap { item -> Int64? in
            guard case .run = item.action else { return nil }
            return item.itemID
        }
        try await withdrawRetryRequests(of: items)
    }

    /// Withdraws the retry requests of `items` (those whose file is gone, which no run takes up), and those of every
    /// item no longer failed.
    public func withdrawRetryRequests(of items: some Collection<Int64>) async throws(StateError) {
        let items = Array(items)
        try await write { db in
            guard try db.tableExists("retryRequests") else { return }
            let statement = try db.cachedStatement(sql: "DELETE FROM retryRequests WHERE item = ?")
            for item in items { try statement.execute(arguments: [item]) }
            try db.execute(
                sql: "DELETE FROM retryRequests WHERE item IN (SELECT id FROM items WHERE status != ?)",
                arguments: [ItemStatus.failed.rawValue])
        }
    }
}
