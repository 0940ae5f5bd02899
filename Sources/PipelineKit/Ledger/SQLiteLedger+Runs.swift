import Foundation
import GRDB
import StageKit

// The runs a state folder's ledger recorded, for the dashboard's run history.
extension SQLiteLedger {
    /// A page of the folder's runs, newest first, and how many it recorded.
    public func pastRuns(limit: Int, offset: Int) async throws(StateError) -> RunPage {
        let heldSince = await folderHeldSince()
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
                    stillRuns: Self.stillRuns(startedAt: startedAt, heldSince: heldSince),
                    submission: false)
            }
            return RunPage(runs: runs, total: total)
        }
    }

    /// Since when a process holds the state folder (nil: none does). The lock's probe opens and stats a file: on the
    /// pool of short blocking calls.
    func folderHeldSince() async -> Date? {
        let folder = file.deletingLastPathComponent()
        return (try? await BlockingWork.run { StateLock.heldSince(folder) }) ?? nil
    }

    /// Whether a run that has not finished, started at `startedAt`, still runs: the process that holds the folder now
    /// (since `heldSince`) took it before the run started. One the folder's holder did not start (or with no holder)
    /// was interrupted. One rule for the run history and for the overview's count of the files a run has not taken up.
    static func stillRuns(startedAt: Date, heldSince: Date?) -> Bool {
        heldSince.map { startedAt >= $0.addingTimeInterval(-StateLock.stampSlack) } ?? false
    }
}
