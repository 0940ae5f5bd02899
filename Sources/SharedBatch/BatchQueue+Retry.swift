public import PipelineKit
import PostgresNIO

extension BatchQueue {
    /// Queues a failed item again with the latest submitted version of its workflow (the dashboard's retry);
    /// false when the item is not failed, already queued, or was never queued by a submit. Its takeover count starts
    /// again (``TakeoverLimit``).
    public func retryFailed(_ item: Int64) async throws(StateError) -> Bool {
        var bindings = PostgresBindings()
        bindings.append(item)
        return try await retryFailed(where: "id = $1", bindings).contains(item)
    }

    /// Queues again, as ``retryFailed(_:)`` does each, every failed item that `query`'s filters select (workflow,
    /// name, error kind, stage; its status, order and page are not used): the dashboard's "retry all failed".
    /// Returns the items queued; a failed item that a submit refused (never queued) stays failed.
    public func retryFailed(matching query: ItemQuery) async throws(StateError) -> [Int64] {
        var failed = query
        failed.status = .failed
        failed.worker = nil
        var bindings = PostgresBindings()
        let condition = ItemFinding.condition(of: failed, &bindings)
        return try await retryFailed(where: condition, bindings)
    }

    /// The one rule of a retry: failed items out of the queue that a submit queued once are queued again, with their
    /// units, in one transaction (together, or none is).
    private func retryFailed(where condition: String, _ bindings: PostgresBindings) async throws(StateError)
        -> [Int64]
    {
        let logger = database.logger
        return try await database.transaction("queue failed items again") { connection in
            var queued: [Int64] = []
            for try await row in try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        UPDATE items SET queued_with = (SELECT max(id) FROM workflows WHERE name = items.workflow),
                            queued_at = now(), \(TakeoverLimit.queuedAgain)
                        WHERE id IN (SELECT id FROM items WHERE \(condition))
                            AND status = 'failed' AND queued_with IS NULL AND queued_digest IS NOT NULL
                        RETURNING id
                        """, binds: bindings), logger: logger)
            {
                queued.append(try row.decode(Int64.self))
            }
            guard !queued.isEmpty else { return [] }
            try await connection.query(TakeoverLimit.requeueUnits(of: queued), logger: logger)
            return queued
        }
    }
}
