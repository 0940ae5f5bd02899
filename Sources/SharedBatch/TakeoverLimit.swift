import PostgresNIO
public import StageKit

/// The takeover limit (`pipeline worker --abandon-after N`): an item or a segment unit whose workers die while
/// they run it (a poison item: an input that crashes a decoder, a stage that exhausts the machine's memory) is
/// failed as ``StageKit/ErrorKind/abandoned`` after N takeovers without progress, instead of killing every worker
/// of the farm in turn.
///
/// The rules, in one place (the queue's and the segment queue's claims take their SQL from here):
/// - **Progress** is a stage done for the first time since the item was queued (`items.done_stages`, a high-water
///   mark): a stage that runs again on every takeover (a secret, a refresh, an output missing on a new machine)
///   adds nothing, so it cannot hide a poison item behind it. It resets the count. A unit's progress is its end.
/// - **A takeover counts against the item that was running**: only when the worker that died ran nothing else
///   (its lease was held alone, `alone_generation` = the lease's generation). A worker running several items
///   when it died charges none of them.
/// - **Crash recovery waits for nobody**: a row whose holder died is claimed by any worker with a free job, and
///   the takeover makes it *suspect* (taken over since its last progress). A suspect row is claimed only by a
///   worker that runs nothing else; while a suspect item waits for it, a busy worker claims no item but a dead
///   worker's (``drainExempt(_:alone:)``), so it drains and takes that item first. It holds it alone (claims
///   nothing more) until the item makes progress or ends, so the next death is the item's own. Healthy items
///   beside a poison one lose nothing but their place in line. Segment units are claimed before items and do not
///   wait for the drain (a suspect item waits for them).
/// - **A database outage is not a crash**: a takeover counts only when the database server was up since the
///   previous holder last renewed its lease (`pg_postmaster_start_time()`); after a restart the leases that ran
///   out meanwhile are taken over without counting and without making their items suspect.
/// - A takeover is not one of a unit's attempts (``StageRuntime/SegmentUnitState/attemptLimit``): the takeover
///   limit rules a unit that kills its workers, the attempt limit a unit whose encode fails.
///
/// The columns are an addition within schema 2 (a pipeline that does not know them ignores them): see
/// docs/workers-and-farm.md for what an older worker on the same batch does.
public enum TakeoverLimit {
    /// The limit when none is given.
    public static let defaultLimit = 3
    /// The limits `--abandon-after` accepts.
    public static let bounds = 1...100

    /// The failure of an item abandoned after `takeovers` takeovers without progress.
    public static func failure(takeovers: Int) -> StageFailure {
        StageFailure(
            "abandoned after \(takeovers) takeover(s) without progress: the workers running this item died (killed, crashed or out of memory) each time; see their logs, then queue it again with submit --failed or the dashboard's retry",
            kind: .abandoned)
    }

    /// Whether the holder of the lease of the row `table` died while the database was up: it last claimed or renewed
    /// the lease after the server's start (nil owner: the lease was let go, no takeover at all). The moment is the
    /// row's own (`lease_renewed`), so a `workers` row pruned or lost in a restart changes nothing; a lease an older
    /// worker holds (no moment of its own) is judged by its expiry.
    static func died(_ table: String) -> String {
        """
        (\(table).lease_owner IS NOT NULL
            AND pg_postmaster_start_time() < coalesce(\(table).lease_renewed, \(table).lease_expires))
        """
    }

    /// What a claim or a renewal of a lease sets besides its expiry: the moment, for ``died(_:)``.
    static let renewed = "lease_renewed = now()"

    /// Whether a takeover of the row `table` counts: its holder died, and held it alone.
    static func counted(_ table: String) -> String {
        "(\(died(table)) AND \(table).alone_generation IS NOT DISTINCT FROM \(table).lease_generation)"
    }

    /// The columns a claim of a row of `table` sets: the count, the suspicion, and whether the new lease is held
    /// alone (`alone`: the claimer runs nothing else; `staysAlone`: it never runs more than one at once).
    static func claimed(_ table: String, alone: Bool, staysAlone: Bool) -> String {
        """
        takeovers = \(table).takeovers + CASE WHEN \(counted(table)) THEN 1 ELSE 0 END,
        suspect = \(table).suspect OR coalesce(\(died(table)), false),
        alone_generation = CASE WHEN \(alone) AND (\(table).suspect OR \(died(table)) OR \(staysAlone))
            THEN \(table).lease_generation + 1 END
        """
    }

    /// The condition a claimer that runs other work (`alone` false) puts on the rows it may take: none suspect. A
    /// row whose holder died but that is not suspect yet is anybody's: crash recovery waits for no idle worker.
    static func claimable(_ table: String, alone: Bool) -> String {
        "(\(alone) OR NOT \(table).suspect)"
    }

    /// The rows of `table` a claimer takes even while a suspect row it could run waits for a worker to drain: any
    /// when it runs nothing else (`alone`), else those whose holder died (crash recovery waits for nobody). Every
    /// other row waits, so that a busy worker drains to nothing and takes the suspect row next.
    static func drainExempt(_ table: String, alone: Bool) -> String {
        alone ? "true" : died(table)
    }

    /// The condition of a lone claimer's first look, which takes a suspect row before any other: served by the
    /// partial index `items_suspect`.
    static func suspectFirst(_ table: String) -> String {
        "\(table).suspect"
    }

    /// What queueing an item again sets: its count and its high-water mark start again.
    static let queuedAgain = "takeovers = 0, suspect = false, done_stages = '{}'"

    /// Starts the count of the units of `items`' plans again (those abandoned get their attempts back too).
    static func requeueUnits(of items: [Int64]) -> PostgresQuery {
        """
        UPDATE segment_units SET attempts = CASE WHEN abandoned THEN 0 ELSE attempts END, abandoned = false,
            takeovers = 0, suspect = false
        WHERE plan IN (SELECT id FROM segment_plans WHERE item = ANY(\(items))) AND status <> 'done'
        """
    }

    /// The columns and the index, added once: each is checked first, as the other additions are (a role that may
    /// only read the batch opens it, and nothing locks `items` once they are there). Every column is checked, so a
    /// batch made before any of them, or before the last of them, gets those it lacks.
    static let addition = """
        DO $$ BEGIN
            IF (SELECT count(*) FROM pg_attribute WHERE attrelid = 'items'::regclass AND NOT attisdropped
                AND attname IN ('takeovers', 'suspect', 'alone_generation', 'done_stages', 'lease_renewed')) < 5 THEN
                ALTER TABLE items ADD COLUMN IF NOT EXISTS takeovers integer NOT NULL DEFAULT 0,
                    ADD COLUMN IF NOT EXISTS suspect boolean NOT NULL DEFAULT false,
                    ADD COLUMN IF NOT EXISTS alone_generation bigint,
                    ADD COLUMN IF NOT EXISTS done_stages text[] NOT NULL DEFAULT '{}',
                    ADD COLUMN IF NOT EXISTS lease_renewed timestamptz;
            END IF;
            IF to_regclass('items_suspect') IS NULL THEN
                CREATE INDEX items_suspect ON items (id) WHERE suspect;
            END IF;
            IF (SELECT count(*) FROM pg_attribute WHERE attrelid = 'segment_units'::regclass AND NOT attisdropped
                AND attname IN ('takeovers', 'suspect', 'alone_generation', 'abandoned', 'lease_renewed')) < 5 THEN
                ALTER TABLE segment_units ADD COLUMN IF NOT EXISTS takeovers integer NOT NULL DEFAULT 0,
                    ADD COLUMN IF NOT EXISTS suspect boolean NOT NULL DEFAULT false,
                    ADD COLUMN IF NOT EXISTS alone_generation bigint,
                    ADD COLUMN IF NOT EXISTS abandoned boolean NOT NULL DEFAULT false,
                    ADD COLUMN IF NOT EXISTS lease_renewed timestamptz;
            END IF;
        END $$
        """
}
