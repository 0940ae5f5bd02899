import PipelineKit
import PostgresNIO

/// The tables of a shared batch: the ledger's (items, versions, paths, stages, cancel requests, the fingerprint
/// cache, runs), the stored workflow documents, the queue's columns on items, the workers, and (from version 2)
/// the units of segmented encodes that workers share.
///
/// Paths sort in the byte order of their UTF-8 (`COLLATE "C"`), as the ledger's range reads expect. Workers
/// that start together create the schema once: the migration holds an advisory lock.
enum BatchSchema {
    /// The schema version this pipeline writes.
    static let version: Int32 = 2

    /// An arbitrary key for the advisory lock that serialises migrations.
    private static let lockKey: Int64 = 0x7069_7065_6c69_6e65

    /// What a command that found no batch in a database can do about it.
    static let submitHint = "submit one with pipeline submit WORKFLOW --db URL, or check the database's name in the URL"

    /// Brings the schema to this pipeline's version; with `creating` false, a database without a batch is left as it
    /// is and refused with ``StateError/Code-swift.struct/missing``. A batch of an older version is upgraded either
    /// way: the commands that read it need its tables as this pipeline knows them.
    static func migrate(_ database: BatchDatabase, creating: Bool) async throws(StateError) {
        let location = database.location
        let found: Int32? = try await database.transaction("create the schema") { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: database.logger)
            if creating {
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS pipeline_schema(version integer NOT NULL)", logger: database.logger)
            } else {
                var exists = false
                for try await row in try await connection.query(
                    "SELECT to_regclass('pipeline_schema') IS NOT NULL", logger: database.logger)
                {
                    exists = try row.decode(Bool.self)
                }
                guard exists else { return nil }
            }
            var current: Int32?
            for try await row in try await connection.query(
                "SELECT max(version) FROM pipeline_schema", logger: database.logger)
            {
                current = try row.decode(Int32?.self)
            }
            guard creating || current != nil else { return nil }
            // A newer pipeline's batch is left as it is (refused below): its schema may have moved on from what
            // this one would add.
            if let current, current > version { return current }
            if let current { try await refuseDamage(connection, database, version: current) }
            if let current, current == version {
                try await addAdditions(connection, database)
                return current
            }
            for (index, statements) in migrations.enumerated() where index >= Int(current ?? 0) {
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: database.logger)
                }
            }
            try await connection.query("DELETE FROM pipeline_schema", logger: database.logger)
            try await connection.query("INSERT INTO pipeline_schema VALUES (\(version))", logger: database.logger)
            try await addAdditions(connection, database)
            return version
        }
        guard let found else {
            throw StateError(
                code: .missing, message: "no batch in the database \(location): \(submitHint)", path: location)
        }
        if found > version {
            throw StateError(
                code: .incompatible,
                message:
                    "the database \(location) has schema \(found), newer than this pipeline reads (\(version)); use a newer pipeline",
                path: location)
        }
    }

    /// Refuses a batch that lacks some of the tables its version has (dropped by hand, or an emptying stopped half
    /// way). None is made again: the tables left refer to items and workflows by numbers that a table made anew
    /// would hand out again from 1, so a new item would take up an old one's checkpoints, cancel request or segment
    /// plan, and a queued item another workflow.
    private static func refuseDamage(_ connection: PostgresConnection, _ database: BatchDatabase, version: Int32)
        async throws
    {
        var missing: [String] = []
        for try await row in try await connection.query(
            "SELECT name FROM unnest(\(tables(of: version))) AS name WHERE to_regclass(name) IS NULL",
            logger: database.logger)
        {
            missing.append(try row.decode(String.self))
        }
        guard !missing.isEmpty else { return }
        let (tables, are) = missing.count == 1 ? ("table", "is") : ("tables", "are")
        throw StateError(
            code: .corrupt,
            message:
                "the batch in the database \(database.location) is damaged: its \(tables) \(missing.joined(separator: ", ")) \(are) missing; pipeline does not re-create part of a batch, whose other tables refer to its items and workflows by number: restore the database from a backup, or drop the batch's other tables (pipeline_schema among them) and submit its workflows again",
            path: database.location)
    }

    /// The tables a batch of schema `version` has: those its migrations create.
    static func tables(of version: Int32) -> [String] {
        migrations.prefix(Int(version)).joined().compactMap { statement in
            guard statement.hasPrefix("CREATE TABLE ") else { return nil }
            return String(statement.dropFirst("CREATE TABLE ".count).prefix { $0 != "(" })
        }
    }

    /// Tables, columns and indexes added within a schema version, which a pipeline that does not know them
    /// ignores: the notifications sent (``NotificationLog``), the indexes a dashboard finds and pages items with
    /// (``ItemFinding``),
    /// how far the encode of each running segment unit is (renewed with its lease), the items' counts
    /// (``ItemTallies``), the items' claims on the files they write (``PipelineKit/OutputClaim``), webhooks named by
    /// digest in the notifications sent, the takeover limit's counts (``TakeoverLimit``), the stage attempts of
    /// items' histories (``PipelineKit/AttemptHistory``), and the `workers` columns a worker is controlled and
    /// followed by (``WorkerControl``: `request`, `took_over`, `progress`, `takes_requests`).
    /// Each is checked first: a command that only reads a batch adds nothing that is there (CREATE … IF NOT EXISTS
    /// needs the right to create, and CREATE INDEX locks `items` against the workers' writes even when the index
    /// exists; ALTER TABLE locks the table even when the column is there).
    private static let additions = [
        """
        DO $$ BEGIN
            IF to_regclass('notifications') IS NULL THEN
                CREATE TABLE notifications(key text PRIMARY KEY, sent_at timestamptz NOT NULL DEFAULT now());
            END IF;
        END $$
        """,
        """
        DO $$ BEGIN
            IF to_regclass('items_by_status') IS NULL THEN
                CREATE INDEX items_by_status ON items(workflow, status, updated_at);
            END IF;
        END $$
        """,
        ItemFinding.indexes,
        """
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'segment_units'::regclass
                AND attname = 'progress' AND NOT attisdropped) THEN
                ALTER TABLE segment_units ADD COLUMN progress double precision NOT NULL DEFAULT 0;
            END IF;
        END $$
        """,
        ItemTallies.addition,
        PostgresStore.outputClaimsTable,
        // Webhook URLs that an earlier pipeline recorded at the end of notification keys become their digests, as
        // `WebhookName.of` computes them: a webhook's URL is its secret. A role that may only read the batch
        // leaves them (and reads on).
        """
        DO $$ BEGIN
            IF EXISTS (SELECT 1 FROM notifications WHERE key ~ ' https?://[^ ]*$') THEN
                UPDATE notifications SET key = regexp_replace(key, 'https?://[^ ]*$', '') || 'webhook:'
                    || encode(sha256(convert_to('pipeline-webhook:' || substring(key FROM ' (https?://[^ ]*)$'),
                        'UTF8')), 'hex')
                WHERE key ~ ' https?://[^ ]*$';
            END IF;
        EXCEPTION WHEN insufficient_privilege THEN NULL;
        END $$
        """,
        TakeoverLimit.addition,
        PostgresStore.attemptsTable,
        // What a worker is asked (drain, stop), the items it took over and its running stages (``WorkerControl``).
        WorkerControl.addition,
    ]

    private static func addAdditions(_ connection: PostgresConnection, _ database: BatchDatabase) async throws {
        for statement in additions {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: database.logger)
        }
    }

    /// The statements that bring the schema from version N to N + 1, at index N (version 0: no schema).
    private static let migrations = [initial, segmentUnits]

    /// Version 1: the ledger, the queue and the workers.
    private static let initial = [
        """
        CREATE TABLE workflows(
            id bigserial PRIMARY KEY, key text NOT NULL UNIQUE, name text NOT NULL, file text NOT NULL,
            document bytea NOT NULL, vars text NOT NULL, digest text NOT NULL, stages text NOT NULL,
            submitted_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE runs(
            id bigserial PRIMARY KEY, workflow text NOT NULL, file text NOT NULL, stages text NOT NULL,
            started_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz, summary text)
        """,
        """
        CREATE TABLE items(
            id bigserial PRIMARY KEY, workflow text NOT NULL, version integer NOT NULL, fingerprint text NOT NULL,
            path text COLLATE "C" NOT NULL, relative_path text NOT NULL, size bigint NOT NULL,
            modified double precision NOT NULL, meta text, status text NOT NULL, digest text, error text,
            error_kind text, updated_at timestamptz NOT NULL DEFAULT now(),
            queued_with bigint REFERENCES workflows(id), queued_digest text, queued_at timestamptz,
            lease_owner text, lease_generation bigint NOT NULL DEFAULT 0, lease_expires timestamptz,
            UNIQUE(workflow, fingerprint))
        """,
        "CREATE INDEX items_by_path ON items(workflow, path)",
        "CREATE INDEX items_queued ON items(id) WHERE queued_with IS NOT NULL",
        "CREATE INDEX items_by_lease_owner ON items(lease_owner) WHERE lease_owner IS NOT NULL",
        """
        CREATE TABLE versions(
            item bigint NOT NULL REFERENCES items(id) ON DELETE CASCADE, version integer NOT NULL,
            fingerprint text NOT NULL, path text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY(item, version))
        """,
        """
        CREATE TABLE paths(
            item bigint NOT NULL REFERENCES items(id) ON DELETE CASCADE, path text NOT NULL,
            PRIMARY KEY(item, path))
        """,
        """
        CREATE TABLE stages(
            item bigint NOT NULL REFERENCES items(id) ON DELETE CASCADE, version integer NOT NULL,
            stage text NOT NULL, status text NOT NULL, record text NOT NULL, PRIMARY KEY(item, version, stage))
        """,
        """
        CREATE TABLE cancel_requests(
            item bigint PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            requested_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE files(
            path text COLLATE "C" PRIMARY KEY, size bigint NOT NULL, modified_ns bigint NOT NULL,
            inode bigint NOT NULL, device bigint NOT NULL, method text NOT NULL, fingerprint text NOT NULL,
            media text)
        """,
        """
        CREATE TABLE workers(
            id text PRIMARY KEY, host text NOT NULL, pid integer NOT NULL, lease double precision NOT NULL,
            started_at timestamptz NOT NULL DEFAULT now(), heartbeat_at timestamptz NOT NULL DEFAULT now(),
            stopped_at timestamptz, done bigint NOT NULL DEFAULT 0, failed bigint NOT NULL DEFAULT 0)
        """,
    ]

    /// Version 2: the plans of segmented encodes and their units, claimed under leases as items are.
    private static let segmentUnits = [
        """
        CREATE TABLE segment_plans(
            id text PRIMARY KEY, item bigint NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            input text NOT NULL, settings text NOT NULL, threads integer NOT NULL, encoder text NOT NULL,
            seconds double precision NOT NULL, created_at timestamptz NOT NULL DEFAULT now())
        """,
        "CREATE INDEX segment_plans_by_item ON segment_plans(item)",
        """
        CREATE TABLE segment_units(
            plan text NOT NULL REFERENCES segment_plans(id) ON DELETE CASCADE, unit integer NOT NULL,
            kind text NOT NULL, start_seconds double precision NOT NULL, end_seconds double precision,
            seconds double precision NOT NULL, status text NOT NULL DEFAULT 'queued', lease_owner text,
            lease_generation bigint NOT NULL DEFAULT 0, lease_expires timestamptz, attempts integer NOT NULL DEFAULT 0,
            size bigint, sha256 text, encoded_by text, done_at timestamptz, PRIMARY KEY(plan, unit))
        """,
        "CREATE INDEX segment_units_open ON segment_units(plan) WHERE status <> 'done'",
    ]
}
