import Foundation
import GRDB
public import StageKit

// The ledger's reads: items, the fingerprint cache, checkpoints, cancel requests and runs.
extension SQLiteLedger {
    public func snapshot(workflow: String) async throws(StateError) -> LedgerSnapshot {
        LedgerSnapshot(items: try await items(where: "workflow = ? ORDER BY id", arguments: [workflow]))
    }

    /// The columns ``item(_:)`` reads, in order (by position: a large ledger is read many rows a second).
    static let itemColumns =
        "id, version, fingerprint, path, relativePath, size, modified, meta, status, digest, error, errorKind, updatedAt"

    /// The item of the row `columns` stand on, whose first columns are ``itemColumns``.
    static func item(_ columns: SQLiteColumns) -> LedgerItem {
        LedgerItem(
            storedID: columns.int64(0), version: Int(columns.int64(1)), fingerprint: columns.text(2),
            path: columns.text(3), relativePath: columns.text(4), size: columns.int64(5), modified: columns.double(6),
            meta: columns.optionalText(7), status: columns.text(8), digest: columns.optionalText(9),
            error: columns.optionalText(10), errorKind: columns.optionalText(11),
            updatedAt: Date(timeIntervalSince1970: columns.double(12)))
    }

    public func items(workflow: String, pathsFrom first: String, through last: String) async throws(StateError)
        -> [LedgerItem]
    {
        try await items(
            where: "workflow = ? AND path BETWEEN ? AND ?", arguments: [workflow, first, last], preparedOnce: true)
    }

    public func items(workflow: String, fingerprints: [String]) async throws(StateError) -> [LedgerItem] {
        guard !fingerprints.isEmpty else { return [] }
        // One statement per chunk of fingerprints, well under SQLite's limit of 32,766 parameters.
        let list = String(repeating: "?,", count: fingerprints.count - 1) + "?"
        return try await items(
            where: "workflow = ? AND fingerprint IN (\(list))", arguments: StatementArguments([workflow] + fingerprints)
        )
    }

    /// The items that meet `condition`; `preparedOnce` for a statement a plan runs for each chunk of files.
    private func items(where condition: String, arguments: StatementArguments, preparedOnce: Bool = false)
        async throws(StateError) -> [LedgerItem]
    {
        try await read { db in
            var items: [LedgerItem] = []
            let sql = "SELECT \(Self.itemColumns) FROM items WHERE \(condition)"
            let statement = try preparedOnce ? db.cachedStatement(sql: sql) : db.makeStatement(sql: sql)
            try SQLiteColumns.forEachRow(of: statement, arguments: arguments) { items.append(Self.item($0)) }
            return items
        }
    }

    public func cachedFingerprints(pathsFrom first: String, through last: String) async throws(StateError)
        -> [String: FingerprintCacheEntry]
    {
        // A plan's read of each chunk: a statement prepared once, its columns read straight from SQLite.
        try await read { db in
            var entries: [String: FingerprintCacheEntry] = [:]
            let statement = try db.cachedStatement(
                sql: """
                    SELECT path, size, modifiedNanoseconds, inode, device, method, fingerprint, media FROM files
                    WHERE path BETWEEN ? AND ?
                    """)
            try SQLiteColumns.forEachRow(of: statement, arguments: [first, last]) { columns in
                guard
                    let entry = FingerprintCacheEntry(
                        storedPath: columns.text(0), size: columns.int64(1), modifiedNanoseconds: columns.int64(2),
                        inode: columns.int64(3), device: columns.int64(4), method: columns.text(5),
                        fingerprint: columns.text(6), media: columns.optionalText(7))
                else { return }
                entries[entry.stamp.path] = entry
            }
            return entries
        }
    }

    public func checkpoints(workflow: String, items: Set<Int64>?) async throws(StateError) -> [Int64: [String:
        StageRecord]]
    {
        try await records(workflow: workflow, items: items, condition: CheckpointCompaction.currentCheckpoints)
    }

    /// The stage records of a workflow's items (nil: all of them) that meet `condition`. A few items are
    /// looked up by id, a thousand at a time; many (or all) are read in one pass over the workflow's records.
    private func records(workflow: String, items: Set<Int64>?, condition: String) async throws(StateError)
        -> [Int64: [String: StageRecord]]
    {
        // `workflow` is the column as the query names it: a unary + keeps SQLite from using its index.
        @Sendable func sql(_ workflow: String) -> String {
            """
            SELECT stages.item, stages.stage, stages.record FROM stages JOIN items ON items.id = stages.item
            WHERE \(workflow) = ? AND \(condition)
            """
        }
        guard let items, items.count <= 10_000 else {
            return try await read { db in
                var found: [Int64: [String: StageRecord]] = [:]
                let rows = try Row.fetchCursor(db, sql: sql("items.workflow"), arguments: [workflow])
                while let row = try rows.next() {
                    let item: Int64 = row[0]
                    guard items?.contains(item) ?? true else { continue }
                    found[item, default: [:]][row[1]] = try StageRecord(decoding: row[2])
                }
                return found
            }
        }
        let ids = Array(items)
        // The ids lead: without the +, SQLite walks every item of the workflow through an index on `workflow`
        // (itemsByStatus) to find a few hundred of them.
        let byID = sql("+items.workflow")
        return try await read { db in
            var found: [Int64: [String: StageRecord]] = [:]
            for start in stride(from: 0, to: ids.count, by: 1_000) {
                let chunk = ids[start..<min(start + 1_000, ids.count)]
                let list = String(repeating: "?,", count: chunk.count - 1) + "?"
                let rows = try Row.fetchCursor(
                    db, sql: byID + " AND stages.item IN (\(list))",
                    arguments: StatementArguments([workflow] + chunk.map { $0 as any DatabaseValueConvertible }))
                while let row = try rows.next() {
                    found[row[0] as Int64, default: [:]][row[1]] = try StageRecord(decoding: row[2])
                }
            }
            return found
        }
    }

    public func workflows() async throws(StateError) -> [RunRecord] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT workflow, file, stages FROM runs WHERE id IN (SELECT max(id) FROM runs GROUP BY workflow)
                    ORDER BY workflow
                    """
            ).map { row in
                RunRecord(
                    workflow: row["workflow"], file: row["file"],
                    stages: (row["stages"] as String).split(separator: "\n").map(String.init))
            }
        }
    }

    public func cancelRequests(workflow: String) async throws(StateError) -> Set<Int64> {
        try await read { db in
            Set(
                try Int64.fetchAll(
                    db,
                    sql: """
                        SELECT cancelRequests.item FROM cancelRequests JOIN items ON items.id = cancelRequests.item
                        WHERE items.workflow = ?
                        """, arguments: [workflow]))
        }
    }

    public func previousOutputs(workflow: String, items: Set<Int64>?) async throws(StateError)
        -> [Int64: [String: JSONValue]]
    {
        try await records(
            workflow: workflow, items: items,
            condition: CheckpointCompaction.previousOutputs
        ).mapValues { $0.mapValues { $0.outputs ?? .null } }
    }
}
