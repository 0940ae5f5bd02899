import Foundation
public import PipelineKit
import PostgresNIO
import StageKit

// Items' histories (``AttemptHistory``) in the batch's table `stage_attempts`, with the meaning ``SQLiteLedger``
// gives them, and the worker that ran each attempt.
extension PostgresStore: AttemptHistory {
    /// The table of attempts that did not simply succeed, added within schema 2 (a pipeline that does not know it
    /// ignores it): the attempt's record as JSON and the worker that held the item's lease, going with its item.
    static let attemptsTable = """
        DO $$ BEGIN
            IF to_regclass('stage_attempts') IS NULL THEN
                CREATE TABLE stage_attempts(
                    id bigserial PRIMARY KEY, item bigint NOT NULL REFERENCES items(id) ON DELETE CASCADE,
                    worker text, record text NOT NULL);
                CREATE INDEX stage_attempts_by_item ON stage_attempts(item, id);
            END IF;
        EXCEPTION WHEN insufficient_privilege THEN NULL;
        END $$
        """

    /// How long a history write waits for an unreachable server: the record is optional, and the stage's next
    /// step (its retry, the item's end, a worker's shutdown) does not wait on it.
    static let historyPatience: Duration = .seconds(2)

    public func recordAttempt(_ attempt: StageAttempt, of item: Int64) async throws(StateError) {
        let record = try attempt.encoded()
        let logger = database.logger
        try await write(item, "record an attempt", patience: Self.historyPatience) { connection in
            try await connection.query(
                """
                INSERT INTO stage_attempts(item, worker, record)
                SELECT id, lease_owner, \(record) FROM items WHERE id = \(item)
                """, logger: logger)
            try await connection.query(
                """
                DELETE FROM stage_attempts WHERE item = \(item) AND id <= (
                    SELECT id FROM stage_attempts WHERE item = \(item) ORDER BY id DESC
                    LIMIT 1 OFFSET \(StageAttempt.keptPerItem))
                """, logger: logger)
        }
    }

    public func history(of item: Int64) async throws(StateError) -> ItemHistory? {
        // An item's versions go with it: none, no item.
        let versions = try await database.rows(
            "read an item's versions",
            "SELECT version, path, created_at FROM versions WHERE item = \(item) ORDER BY version")
        let stages = try await database.rows(
            "read an item's checkpoints",
            "SELECT version, record FROM stages WHERE item = \(item) ORDER BY version, stage")
        // A batch whose schema a reader could not add to has no attempts table yet, and a reader granted SELECT on
        // the tables before it was made may not read it: either has no attempts to show.
        let kept = try await database.rows(
            "read an item's attempts",
            """
            SELECT CASE WHEN to_regclass('stage_attempts') IS NULL THEN false
                ELSE has_table_privilege('stage_attempts', 'SELECT') END
            """)
        let attempts =
            try database.decoding("read an item's attempts", { try kept.first?.decode(Bool.self) ?? false })
            ? try await database.rows(
                "read an item's attempts", "SELECT worker, record FROM stage_attempts WHERE item = \(item) ORDER BY id")
            : []
        guard !versions.isEmpty else { return nil }
        return try database.decoding("read an item's history") {
            var checkpoints: [Int: [StageRecord]] = [:]
            for row in stages {
                let (version, record) = try row.decode((Int32, String).self)
                checkpoints[Int(version), default: []].append(try StageRecord(decoding: record))
            }
            return ItemHistory(
                versions: try versions.map { row in
                    let (version, path, created) = try row.decode((Int32, String, Date).self)
                    return ItemHistory.Version(version: Int(version), path: path, createdAt: created)
                },
                checkpoints: checkpoints,
                attempts: try attempts.compactMap { row in
                    let (worker, record) = try row.decode((String?, String).self)
                    return StageAttempt(decoding: record, worker: worker)
                })
        }
    }
}
