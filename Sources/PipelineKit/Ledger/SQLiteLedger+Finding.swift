import GRDB
import StageKit

// Lists of items as a dashboard asks for them (``ItemQuery``): filtered, ordered, paged and counted in SQL.
extension SQLiteLedger {
    public func items(matching query: ItemQuery) async throws(StateError) -> ItemList {
        try await read { db in
            let (condition, arguments) = Self.condition(of: query)
            let total =
                try Int.fetchOne(db, sql: "SELECT count(*) FROM items WHERE \(condition)", arguments: arguments) ?? 0
            guard query.offset < total, query.limit > 0 else { return ItemList(items: [], total: total) }
            let statement = try db.makeStatement(
                sql: """
                    SELECT \(Self.itemColumns), workflow FROM items WHERE \(condition)
                    ORDER BY \(Self.order(query.order)) LIMIT ? OFFSET ?
                    """)
            var items: [(workflow: String, item: LedgerItem)] = []
            try SQLiteColumns.forEachRow(of: statement, arguments: arguments + [query.limit, query.offset]) { columns in
                items.append((workflow: columns.text(13), item: Self.item(columns)))
            }
            return ItemList(items: items, total: total)
        }
    }

    public func errorKinds() async throws(StateError) -> [String] {
        try await read { db in
            // The failed items' kinds, one after another through the error-kind index (not a scan of every item).
            try String.fetchAll(
                db,
                sql: """
                    WITH RECURSIVE kinds(kind) AS (
                        SELECT min(errorKind) FROM items WHERE errorKind IS NOT NULL AND status = 'failed'
                        UNION ALL
                        SELECT (SELECT min(errorKind) FROM items WHERE errorKind > kind AND status = 'failed') FROM kinds
                        WHERE kind IS NOT NULL)
                    SELECT kind FROM kinds WHERE kind IS NOT NULL
                    """)
        }
    }

    /// The `WHERE` clause that selects what `query` asks for, and its arguments.
    static func condition(of query: ItemQuery) -> (String, StatementArguments) {
        var terms: [String] = []
        var arguments: StatementArguments = []
        if let workflow = query.workflow {
            terms.append("workflow = ?")
            arguments += [workflow]
        }
        if let pattern = query.namePattern {
            terms.append("relativePath LIKE ? ESCAPE '\\'")
            arguments += [pattern]
        }
        switch query.status {
        case .queued?: terms.append("0")  // A state folder's unstarted files are counted, not items of the ledger.
        case let status?:
            terms.append("status = ?")
            arguments += [status.held.rawValue]
        case nil: break
        }
        if let kind = query.errorKind {
            let unkinded = query.errorKindIncludesUnkinded ? " OR (errorKind IS NULL AND error IS NOT NULL)" : ""
            // Only a failed item's error is its failure: an item admitted again keeps its last error until it ends.
            terms.append("status = ? AND (errorKind = ?\(unkinded))")
            arguments += [ItemStatus.failed.rawValue, kind]
        }
        if let stage = query.stage {
            let statuses = ItemQuery.stageStatuses.map { _ in "?" }.joined(separator: ", ")
            terms.append(
                """
                id IN (SELECT stages.item FROM stages
                    WHERE stages.stage = ? AND stages.status IN (\(statuses))
                    AND stages.version = (SELECT current.version FROM items AS current WHERE current.id = stages.item))
                """)
            arguments += StatementArguments([stage] + ItemQuery.stageStatuses)
        }
        if query.worker != nil { terms.append("0") }  // A state folder has no workers.
        return (terms.isEmpty ? "1" : terms.joined(separator: " AND "), arguments)
    }

    /// The `ORDER BY` of an order.
    static func order(_ order: ItemQuery.Order) -> String {
        switch order {
        case .updated: "updatedAt DESC, id DESC"
        case .name: "relativePath, id"
        case .queue: "id"
        }
    }
}
