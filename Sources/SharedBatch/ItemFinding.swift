public import PipelineKit
import PostgresNIO

/// Lists of a shared batch's items as a dashboard asks for them (``ItemQuery``), with the meaning ``SQLiteLedger``
/// gives them: filtered, ordered, paged and counted in SQL. Queued and running are the queue's (``BatchQueue``).
enum ItemFinding {
    /// The indexes the filters and orders use, made when missing (a role that may only read the batch goes on
    /// without them): by status, error kind, update time and name, and stages by name and status.
    static let indexes = """
        DO $$ BEGIN
            IF to_regclass('items_by_status_and_time') IS NULL THEN
                CREATE INDEX items_by_status_and_time ON items(status, updated_at);
            END IF;
            IF to_regclass('items_by_error_kind') IS NULL THEN
                CREATE INDEX items_by_error_kind ON items(error_kind, updated_at);
            END IF;
            IF to_regclass('items_by_time') IS NULL THEN
                CREATE INDEX items_by_time ON items(updated_at);
            END IF;
            IF to_regclass('items_by_name') IS NULL THEN
                CREATE INDEX items_by_name ON items((relative_path COLLATE "C"), id);
            END IF;
            IF to_regclass('stages_by_stage') IS NULL THEN
                CREATE INDEX stages_by_stage ON stages(stage, status);
            END IF;
        EXCEPTION WHEN insufficient_privilege THEN NULL;
        END $$
        """

    /// The `WHERE` clause that selects what `query` asks for, its values bound in `bindings`.
    static func condition(of query: ItemQuery, _ bindings: inout PostgresBindings) -> String {
        func bound(_ value: String) -> String {
            bindings.append(value)
            return "$\(bindings.count)"
        }
        var terms: [String] = []
        if let workflow = query.workflow { terms.append("workflow = \(bound(workflow))") }
        if let pattern = query.namePattern { terms.append("relative_path ILIKE \(bound(pattern)) ESCAPE '\\'") }
        switch query.status {
        case .queued?: terms.append(BatchQueue.waiting)
        case .running?: terms.append(BatchQueue.running)
        case let status?:
            // An item queued again is queued, whatever its last run ended with (as the counts have it).
            terms.append("status = \(bound(status.held.rawValue)) AND queued_with IS NULL")
        case nil: break
        }
        if let kind = query.errorKind {
            let unkinded = query.errorKindIncludesUnkinded ? " OR (error_kind IS NULL AND error IS NOT NULL)" : ""
            // Only a failed item's error is its failure: an item queued again keeps its last error until it ends.
            terms.append("status = 'failed' AND queued_with IS NULL AND (error_kind = \(bound(kind))\(unkinded))")
        }
        if let stage = query.stage {
            let statuses = ItemQuery.stageStatuses.map(bound).joined(separator: ", ")
            terms.append(
                """
                id IN (SELECT stages.item FROM stages
                    WHERE stages.stage = \(bound(stage)) AND stages.status IN (\(statuses))
                    AND stages.version = (SELECT current.version FROM items AS current WHERE current.id = stages.item))
                """)
        }
        if let worker = query.worker { terms.append("lease_owner = \(bound(worker))") }
        return terms.isEmpty ? "true" : terms.joined(separator: " AND ")
    }

    /// The `ORDER BY` of an order.
    static func order(_ order: ItemQuery.Order) -> String {
        switch order {
        case .updated: "updated_at DESC, id DESC"
        case .name: "relative_path COLLATE \"C\", id"
        case .queue: "id"
        }
    }
}

extension PostgresStore {
    public func items(matching query: ItemQuery) async throws(StateError) -> ItemList {
        var bindings = PostgresBindings()
        let condition = ItemFinding.condition(of: query, &bindings)
        let counted = try await database.rows(
            "count the items",
            PostgresQuery(unsafeSQL: "SELECT count(*) FROM items WHERE \(condition)", binds: bindings))
        let total = try database.decoding("count the items") {
            try counted.first.map { Int(try $0.decode(Int64.self)) } ?? 0
        }
        guard query.offset < total, query.limit > 0 else { return ItemList(items: [], total: total) }
        bindings.append(Int64(query.limit))
        bindings.append(Int64(query.offset))
        let rows = try await database.rows(
            "list the items",
            PostgresQuery(
                unsafeSQL: """
                    SELECT \(Self.itemColumns), workflow FROM items WHERE \(condition)
                    ORDER BY \(ItemFinding.order(query.order)) LIMIT $\(bindings.count - 1) OFFSET $\(bindings.count)
                    """, binds: bindings))
        return try database.decoding("list the items") {
            ItemList(
                items: try rows.map { row in
                    let columns = try NamedColumns(row)
                    let workflow: String = try columns["workflow"]
                    return (workflow: workflow, item: try Self.item(columns))
                }, total: total)
        }
    }

    public func errorKinds() async throws(StateError) -> [String] {
        // The failed items' kinds, one after another through the error-kind index (not a scan of every item).
        let rows = try await database.rows(
            "read the error kinds",
            """
            WITH RECURSIVE kinds(kind) AS (
                SELECT min(error_kind) FROM items WHERE error_kind IS NOT NULL AND status = 'failed' AND queued_with IS NULL
                UNION ALL
                SELECT (SELECT min(error_kind) FROM items WHERE error_kind > kind AND status = 'failed' AND queued_with IS NULL)
                    FROM kinds WHERE kind IS NOT NULL)
            SELECT kind FROM kinds WHERE kind IS NOT NULL
            """)
        return try database.decoding("read the error kinds") { try rows.map { try $0.decode(String.self) } }
    }
}
