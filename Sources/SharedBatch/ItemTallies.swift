import Foundation
import PipelineKit
import PostgresNIO

/// The items of a shared batch counted without reading every item: triggers on `items` append what each
/// statement changed (items and bytes by workflow, status and whether queued, and for items done the minute they
/// were done) to `item_tally_changes`, and a reader sums those rows. Appending never waits for another writer, as
/// updating one counter row per status would; a reader folds the rows back into one per key once there are many.
///
/// The table and its triggers are an addition within schema 2: a database made before them gets them, filled from
/// its items, the first time a pipeline that knows them opens it (while `items` is locked against writes, so no
/// change is counted twice or lost).
enum ItemTallies {
    /// Creates the table, the triggers and the first tally, once.
    static let addition = """
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_class WHERE relname = 'item_tally_changes' AND relkind = 'r') THEN
                LOCK TABLE items IN SHARE ROW EXCLUSIVE MODE;
                CREATE TABLE item_tally_changes(
                    id bigserial PRIMARY KEY, workflow text NOT NULL, status text NOT NULL, queued boolean NOT NULL,
                    minute timestamptz, items bigint NOT NULL, bytes bigint NOT NULL);
                CREATE FUNCTION item_tally_change() RETURNS trigger LANGUAGE plpgsql AS $function$
                BEGIN
                    IF TG_OP = 'INSERT' THEN
                        INSERT INTO item_tally_changes(workflow, status, queued, minute, items, bytes)
                        SELECT workflow, status, queued_with IS NOT NULL,
                            CASE WHEN status = 'succeeded' THEN date_trunc('minute', updated_at) END, count(*), sum(size)
                        FROM new_items GROUP BY 1, 2, 3, 4;
                    ELSIF TG_OP = 'DELETE' THEN
                        INSERT INTO item_tally_changes(workflow, status, queued, minute, items, bytes)
                        SELECT workflow, status, queued_with IS NOT NULL,
                            CASE WHEN status = 'succeeded' THEN date_trunc('minute', updated_at) END, -count(*),
                            -sum(size)
                        FROM old_items GROUP BY 1, 2, 3, 4;
                    ELSE
                        INSERT INTO item_tally_changes(workflow, status, queued, minute, items, bytes)
                        SELECT workflow, status, queued, minute, sum(items), sum(bytes) FROM (
                            SELECT workflow, status, queued_with IS NOT NULL AS queued,
                                CASE WHEN status = 'succeeded' THEN date_trunc('minute', updated_at) END AS minute,
                                1 AS items, size AS bytes FROM new_items
                            UNION ALL
                            SELECT workflow, status, queued_with IS NOT NULL,
                                CASE WHEN status = 'succeeded' THEN date_trunc('minute', updated_at) END, -1, -size
                            FROM old_items) AS changed
                        GROUP BY 1, 2, 3, 4 HAVING sum(items) <> 0 OR sum(bytes) <> 0;
                    END IF;
                    RETURN NULL;
                END $function$;
                CREATE TRIGGER items_tally_insert AFTER INSERT ON items REFERENCING NEW TABLE AS new_items
                    FOR EACH STATEMENT EXECUTE FUNCTION item_tally_change();
                CREATE TRIGGER items_tally_update AFTER UPDATE ON items
                    REFERENCING OLD TABLE AS old_items NEW TABLE AS new_items
                    FOR EACH STATEMENT EXECUTE FUNCTION item_tally_change();
                CREATE TRIGGER items_tally_delete AFTER DELETE ON items REFERENCING OLD TABLE AS old_items
                    FOR EACH STATEMENT EXECUTE FUNCTION item_tally_change();
                INSERT INTO item_tally_changes(workflow, status, queued, minute, items, bytes)
                SELECT workflow, status, queued_with IS NOT NULL,
                    CASE WHEN status = 'succeeded' THEN date_trunc('minute', updated_at) END, count(*), sum(size)
                FROM items GROUP BY 1, 2, 3, 4;
            END IF;
        END $$
        """

    /// Items and bytes of one workflow in one status, queued or not.
    struct Tally: Sendable {
        var workflow: String
        var status: String
        var queued: Bool
        var items: Int
        var bytes: Int64
    }

    /// Change rows beyond one per key (workflow, status, queued, minute done) above which a reader folds them (a
    /// few milliseconds to sum, and to fold). Counted beyond the keys, a long batch's minutes (one row each, which
    /// no fold removes) never make every read fold.
    static let foldAbove = 2_000

    /// Every workflow's items by status and whether queued; folds the change rows when there are many. Gives up
    /// after `patience` (nil: the database's own).
    static func read(_ database: BatchDatabase, patience: Duration? = nil) async throws(StateError) -> [Tally] {
        let rows = try await database.rows(
            "count the items", patience: patience,
            """
            SELECT workflow, status, queued, sum(items)::bigint, sum(bytes)::bigint,
                count(*) - count(DISTINCT minute) - max(CASE WHEN minute IS NULL THEN 1 ELSE 0 END)
            FROM item_tally_changes GROUP BY 1, 2, 3
            """)
        let (tallies, foldable) = try database.decoding("count the items") {
            var foldable = 0
            let tallies = try rows.compactMap { row -> Tally? in
                let (workflow, status, queued, items, bytes, folds) = try row.decode(
                    (String, String, Bool, Int64, Int64, Int64).self)
                foldable += Int(folds)
                guard items != 0 else { return nil }
                return Tally(workflow: workflow, status: status, queued: queued, items: Int(items), bytes: bytes)
            }
            return (tallies, foldable)
        }
        // Best effort: a reader without the right to write (or a fold that loses a race) still counted.
        if foldable > foldAbove { try? await fold(database, patience: patience) }
        return tallies
    }

    /// Items done per minute of one workflow, over the `minutes` up to the last minute with items done.
    static func doneByMinute(_ database: BatchDatabase, workflow: String, minutes: Int) async throws(StateError)
        -> [(minute: Date, done: Int)]
    {
        let rows = try await database.rows(
            "count the items done",
            """
            WITH done AS (
                SELECT minute, sum(items)::bigint AS items FROM item_tally_changes
                WHERE workflow = \(workflow) AND status = 'succeeded' GROUP BY 1 HAVING sum(items) <> 0)
            SELECT minute, items FROM done
            WHERE minute >= (SELECT max(minute) FROM done) - make_interval(mins => \(Int32(minutes)) - 1) ORDER BY 1
            """)
        return try database.decoding("count the items done") {
            try rows.map { row in
                let (minute, items) = try row.decode((Date, Int64).self)
                return (minute, Int(items))
            }
        }
    }

    /// Replaces the change rows by one row per key, in one statement: rows appended meanwhile are not part of it
    /// and stay, and a fold running at the same time skips the rows this one removed.
    static func fold(_ database: BatchDatabase, patience: Duration? = nil) async throws(StateError) {
        try await database.rows(
            "fold the item counts", patience: patience,
            """
            WITH folded AS (DELETE FROM item_tally_changes RETURNING workflow, status, queued, minute, items, bytes)
            INSERT INTO item_tally_changes(workflow, status, queued, minute, items, bytes)
            SELECT workflow, status, queued, minute, sum(items), sum(bytes) FROM folded
            GROUP BY 1, 2, 3, 4 HAVING sum(items) <> 0 OR sum(bytes) <> 0
            """)
    }
}
