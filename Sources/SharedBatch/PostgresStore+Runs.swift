import Foundation
public import PipelineKit
import PostgresNIO

// The submissions a shared batch's ledger recorded, for the dashboard's run history.
extension PostgresStore {
    /// A submission that has not finished is running while no later submission of its workflow was made; a later
    /// one means it was interrupted (a submission holds nothing that outlives its process, so one killed while it
    /// is its workflow's latest reads as running until the next).
    public func pastRuns(limit: Int, offset: Int) async throws(StateError) -> RunPage {
        let counted = try await database.rows("count the runs", "SELECT count(*) FROM runs")
        let rows = try await database.rows(
            "read the runs",
            """
            SELECT id, workflow, started_at, finished_at, summary,
                EXISTS (SELECT 1 FROM runs AS later WHERE later.workflow = runs.workflow AND later.id > runs.id)
            FROM runs ORDER BY id DESC LIMIT \(Int64(limit)) OFFSET \(Int64(offset))
            """)
        return try database.decoding("read the runs") {
            let total = try counted.first.map { Int(try $0.decode(Int64.self)) } ?? 0
            let runs = try rows.map { row in
                let (id, workflow, startedAt, finishedAt, summary, superseded) = try row.decode(
                    (Int64, String, Date, Date?, String?, Bool).self)
                return PastRun(
                    id: id, workflow: workflow, startedAt: startedAt, finishedAt: finishedAt, summary: summary,
                    stillRuns: !superseded, submission: true)
            }
            return RunPage(runs: runs, total: total)
        }
    }
}
