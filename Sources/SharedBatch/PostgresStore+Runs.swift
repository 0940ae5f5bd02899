import Foundation
public import PipelineKit
import PostgresNIO

// The submissions a shared batch's ledger recorded, for the dashboard's run history.
extension PostgresStore {
    /// The first key of the session advisory lock a submission holds while it runs; the second is its run's id (its
    /// low 32 bits). PostgreSQL keeps locks of two 32-bit keys (`objsubid` 2 in `pg_locks`) apart from those of one
    /// 64-bit key (`objsubid` 1), which the schema's migration and output claims take.
    static let submissionLockClass: Int32 = 0x7375_626d

    /// Runs `body` (the rest of submission `run`) while holding the submission's lock, by which ``pastRuns`` tells a
    /// submission under way from one whose process died: the server releases the lock with the connection.
    public func holdingSubmission<T: Sendable>(
        _ run: Int64, _ body: @escaping @Sendable () async throws(StateError) -> T
    ) async throws(StateError) -> T {
        try await database.holdingLock(
            Self.submissionLockClass, Int32(truncatingIfNeeded: run), doing: "hold the submission's lock", body)
    }

    /// A submission that has not finished is running while a process holds its lock (``holdingSubmission``), and
    /// interrupted once none does (killed, or failed before it finished).
    public func pastRuns(limit: Int, offset: Int) async throws(StateError) -> RunPage {
        let counted = try await database.rows("count the runs", "SELECT count(*) FROM runs")
        let rows = try await database.rows(
            "read the runs",
            """
            SELECT id, workflow, started_at, finished_at, summary,
                EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND granted
                    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    AND classid::bigint = \(Int64(Self.submissionLockClass))
                    AND objid::bigint = runs.id % 4294967296)
            FROM runs ORDER BY id DESC LIMIT \(Int64(limit)) OFFSET \(Int64(offset))
            """)
        return try database.decoding("read the runs") {
            let total = try counted.first.map { Int(try $0.decode(Int64.self)) } ?? 0
            let runs = try rows.map { row in
                let (id, workflow, startedAt, finishedAt, summary, held) = try row.decode(
                    (Int64, String, Date, Date?, String?, Bool).self)
                return PastRun(
                    id: id, workflow: workflow, startedAt: startedAt, finishedAt: finishedAt, summary: summary,
                    stillRuns: held, submission: true)
            }
            return RunPage(runs: runs, total: total)
        }
    }
}
