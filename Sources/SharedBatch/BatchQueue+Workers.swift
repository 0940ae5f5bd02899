public import PipelineKit
import PostgresNIO

extension BatchQueue {
    /// Forgets the workers that stopped (they said so) or went silent for longer than their lease (killed, or cut
    /// off: their items are free for others); returns how many. The items they finished stay counted; a worker that
    /// was only cut off records itself again at its next heartbeat.
    public func pruneStoppedWorkers() async throws(StateError) -> Int {
        let rows = try await database.rows(
            "forget the stopped workers",
            """
            DELETE FROM workers
            WHERE NOT (\(unescaped: Self.workerLive))
            RETURNING id
            """)
        return rows.count
    }
}
