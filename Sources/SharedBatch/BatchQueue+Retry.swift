public import PipelineKit
import PostgresNIO

extension BatchQueue {
    /// Queues a failed item again with the latest submitted version of its workflow (the dashboard's retry);
    /// false when the item is not failed, already queued, or was never queued by a submit. Its takeover count starts
    /// again (``TakeoverLimit``).
    public func retryFailed(_ item: Int64) async throws(StateError) -> Bool {
        let rows = try await database.rows(
            "queue a failed item again",
            """
            UPDATE items SET queued_with = (SELECT max(id) FROM workflows WHERE name = items.workflow),
                queued_at = now(), \(unescaped: TakeoverLimit.queuedAgain)
            WHERE id = \(item) AND status = 'failed' AND queued_with IS NULL AND queued_digest IS NOT NULL
            RETURNING id
            """)
        guard !rows.isEmpty else { return false }
        try await database.rows("queue segment units again", TakeoverLimit.requeueUnits(of: [item]))
        return true
    }
}
