import Foundation
import GRDB
import StageKit

// The runs a state folder's ledger recorded, for the dashboard's run history.
extension SQLiteLedger {
    /// A page of the folder's runs, newest first, and how many it recorded.
    public func pastRuns(limit: Int, offset: Int) async throws(StateError) -> RunPage {
        // A run that has not finished still runs when the process that holds the folder now took it before the run
        // started; one the folder's holder did not start (or with no holder) was interrupted.
        // The lock's probe opens and stats a file: on the pool of short blocking calls.
        let folder = file.deletingLastPathComponent()
        let heldSince: Date? = (try? await BlockingWork.run { StateLock.heldSince(folder) }) ?? nil
        return try await read { db in
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM runs") ?? 0
            let runs = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, workflow, startedAt, finishedAt, summary FROM runs
                    ORDER BY id DESC LIMIT ? OFFSET ?
                    """, arguments: [limit, offset]
            ).map { row in
                let startedAt = Date(timeIntervalSince1970: row[2])
                return PastRun(
                    id: row[0], workflow: row[1], startedAt: startedAt,
                    finishedAt: (row[3] as Double?).map(Date.init(timeIntervalSince1970:)), summary: row[4],
                    stillRuns: heldSince.map { startedAt >= $0.addingTimeInterval(-StateLock.stampSlack) } ?? false,
                    submission: false)
            }
            return RunPage(runs: runs, total: total)
        }
    }
}
