public import PipelineKit
import PostgresNIO

extension BatchQueue {
    /// Where an item of the queue stands.
    public enum QueuePlace: Sendable {
        /// A live lease holds it: a worker runs it now.
        case running
        /// Queued, and no live lease holds it: it waits for a worker.
        case waiting
    }

    /// At most `limit` of a workflow's queued items in `place`, after the first `offset`: the running ones the most
    /// recently claimed first (a handful, found through the lease index), the waiting ones in the order workers
    /// take them. The ledger holds both as pending; only the queue tells them apart.
    public func items(_ place: QueuePlace, workflow: String?, limit: Int, offset: Int) async throws(StateError)
        -> [(workflow: String, item: LedgerItem)]
    {
        let condition =
            place == .running
            ? "lease_owner IS NOT NULL AND lease_expires > now() AND queued_with IS NOT NULL"
            : "queued_with IS NOT NULL AND (lease_expires IS NULL OR lease_expires <= now())"
        let order = place == .running ? "lease_expires DESC, id DESC" : "id"
        let rows = try await database.rows(
            "list the queued items",
            """
            SELECT \(unescaped: PostgresStore.itemColumns), workflow FROM items
            WHERE \(unescaped: condition) AND (\(workflow)::text IS NULL OR workflow = \(workflow))
            ORDER BY \(unescaped: order) LIMIT \(limit) OFFSET \(offset)
            """)
        return try database.decoding("list the queued items") {
            try rows.map { row in
                let columns = try NamedColumns(row)
                let workflow: String = try columns["workflow"]
                return (workflow: workflow, item: try PostgresStore.item(columns))
            }
        }
    }
}
