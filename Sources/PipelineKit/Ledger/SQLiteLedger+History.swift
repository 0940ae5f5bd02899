import Foundation
import GRDB
import StageKit

// Items' histories (``AttemptHistory``): the attempts that did not simply succeed, in a table added within schema 1.
extension SQLiteLedger: AttemptHistory {
    /// The attempts table, added within schema 1 as the other additions are: a row per attempt that did not simply succeed, its
    /// record as JSON, going with its item (ON DELETE CASCADE). An older pipeline ignores it.
    static let attemptsTable = """
        CREATE TABLE IF NOT EXISTS attempts(
            id INTEGER PRIMARY KEY, item INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            record TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS attemptsByItem ON attempts(item, id);
        """

    public func recordAttempt(_ attempt: StageAttempt, of item: Int64) async throws(StateError) {
        let record = try attempt.encoded()
        try await write { db in
            try db.execute(sql: "INSERT INTO attempts(item, record) VALUES (?, ?)", arguments: [item, record])
            try db.execute(
                sql: """
                    DELETE FROM attempts WHERE item = ?1 AND id <= (
                        SELECT id FROM attempts WHERE item = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)
                    """, arguments: [item, StageAttempt.keptPerItem])
        }
    }

    public func history(of item: Int64) async throws(StateError) -> ItemHistory? {
        try await read { db in
            guard
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM items WHERE id = ?)", arguments: [item])
                    ?? false
            else { return nil }
            let versions = try Row.fetchAll(
                db, sql: "SELECT version, path, createdAt FROM versions WHERE item = ? ORDER BY version",
                arguments: [item]
            ).map { row in
                ItemHistory.Version(version: row[0], path: row[1], createdAt: Date(timeIntervalSince1970: row[2]))
            }
            var checkpoints: [Int: [StageRecord]] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT version, record FROM stages WHERE item = ? ORDER BY version, stage", arguments: [item])
            {
                checkpoints[row[0], default: []].append(try StageRecord(decoding: row[1]))
            }
            // A ledger no writer of this version has opened has no attempts table, and a reader adds none.
            let attempts =
                try db.tableExists("attempts")
                ? try String.fetchAll(
                    db, sql: "SELECT record FROM attempts WHERE item = ? ORDER BY id", arguments: [item]
                ).compactMap { StageAttempt(decoding: $0, worker: nil) } : []
            return ItemHistory(versions: versions, checkpoints: checkpoints, attempts: attempts)
        }
    }
}
