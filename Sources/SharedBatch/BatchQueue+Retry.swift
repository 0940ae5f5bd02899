public import PipelineKit
import PostgresNIO

extension BatchQueue {
    /// Queues a failed item again with the latest submitted version of its workflow (the dashboard's retry);
    /// false when the item is not failed, already queued, or was never queued by a submit. Its takeover count starts
    /// again (``TakeoverLimit``).
    public func retryFailed(_ item: Int64) async throws(StateError) -> Bool {
        let logger = database.logger
        // One transaction: the item and its units are queued again together, or neither is.
        return try await database.transaction("queue a failed item again") { connection in
            var queued = false
            for try await _ in try await connection.query(
                """
                UPDATE items SET queued_with = (SELECT max(id) FROM workflows WHERE name = items.workflow),
                    queued_at = now(), \(unescaped: TakeoverLimit.queuedAgain)
                WHERE id = \(item) AND status = 'failed' AND queued_with IS NULL AND queued_digest IS NOT NULL
                RETURNING id
                """, logger: logger)
            {
                queued = true
            }
            guard queued else { return false }
            try await connection.query(TakeoverLimit.requeueUnits(of: [item]), logger: logger)
            return true
        }
    }
}
