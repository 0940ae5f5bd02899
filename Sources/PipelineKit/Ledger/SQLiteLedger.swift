public import Foundation
import GRDB
import NIOConcurrencyHelpers
import StageKit

/// The ledger in one SQLite database per state folder (`<state>/ledger.sqlite`), through GRDB.
///
/// The database runs in WAL mode with `synchronous = FULL`: a write returns once its transaction is synced (the few
/// that ``DeferredCommit`` names are synced by the next synced commit, before any outside effect),
/// readers in other processes (`pipeline status`, `pipeline plan`) never wait for the writer, and a crash at
/// any moment leaves the last committed state. Writes go through GRDB's writer queue and are not abandoned when the calling
/// task is cancelled, so an interrupted stage is still recorded as interrupted.
public final class SQLiteLedger: StateStore {
    /// The database file.
    public let file: URL
    let pool: any DatabaseWriter
    let commits = GroupCommit()

    /// The schema version this ledger writes (SQLite's `user_version`).
    static let schemaVersion = 1
    /// The database's name in a state folder.
    public static let fileName = "ledger.sqlite"

    public var location: String { file.path }

    /// Opens (creating if needed) the ledger of a state folder for a process that writes.
    public init(folder: URL) throws(StateError) {
        let file = folder.appendingPathComponent(Self.fileName)
        self.file = file
        try StateFiles.createFolder(folder)
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        // WAL is set here, not with GRDB's `journalMode = .wal`: that also commits a throwaway table whenever
        // the WAL file is missing, which is at every open, since a clean close removes it. synchronous = FULL
        // (GRDB's WAL mode has NORMAL, durable against a crash of the process but not of the machine) syncs
        // the WAL at every commit, so a checkpoint survives a power cut too.
        configuration.prepareDatabase { db in
            guard try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") == "wal" else {
                throw DatabaseError(message: "cannot switch to write-ahead logging")
            }
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        do {
            // One connection for this process's reads and writes: closing it, the last one, folds the WAL back
            // into the database file (with a pool, read-only readers close last and cannot). Other processes
            // read beside it.
            let pool = try DatabaseQueue(path: file.path, configuration: configuration)
            // The tables' commit does not wait for its sync (``DeferredCommit/schema``).
            // The pragma takes effect when its statement is prepared, so it stays an uncached `execute(sql:)`.
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                try db.inTransaction {
                    try Self.migrate(db, file: file)
                    try db.execute(sql: Self.additions)
                    try Self.addTallies(db)
                    try Self.addRunPlans(db)
                    try Self.nameWebhooksByDigest(db)
                    try db.execute(sql: Self.outputClaimsTable)
                    try db.execute(sql: Self.attemptsTable)
                    try db.execute(sql: Self.retryRequestsTable)
                    return .commit
                }
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            self.pool = pool
            commits.noteDeferred(.schema)
        } catch {
            throw Self.stateError(error, file: file, doing: "open")
        }
    }

    /// Opens an existing ledger to read it without changing a byte of the state folder: while no process
    /// has it open (no WAL file) it is read as immutable, so no WAL or shared-memory file is created; else
    /// it is read beside the writer. Writes through this instance fail.
    public init(readingOnly folder: URL) throws(StateError) {
        let file = folder.appendingPathComponent(Self.fileName)
        self.file = file
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(30)
        let idle = !FileManager.default.fileExists(atPath: file.path + "-wal")
        let immutable =
            "file:\(file.path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? file.path)?immutable=1"
        do {
            // A writer may start between the check and the read: then read beside it, as when it was there.
            let queue: DatabaseQueue
            let version: Int
            if idle, let opened = try? DatabaseQueue(path: immutable, configuration: configuration),
                let read = try? opened.read({ db in try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 })
            {
                (queue, version) = (opened, read)
            } else {
                queue = try DatabaseQueue(path: file.path, configuration: configuration)
                version = try queue.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 }
            }
            if version > Self.schemaVersion {
                throw StateError(
                    code: .incompatible,
                    message:
                        "the ledger \(file.path) has schema \(version), newer than this pipeline reads (\(Self.schemaVersion)); use a newer pipeline",
                    path: file.path)
            }
            if version == 0 {
                throw StateError(
                    code: .busy, message: "the ledger \(file.path) is being created by another process; try again",
                    path: file.path)
            }
            pool = queue
        } catch {
            throw Self.stateError(error, file: file, doing: "open")
        }
    }

    /// Whether a state folder has a ledger (a plan reads only an existing one).
    public static func exists(in folder: URL) -> Bool {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent(fileName).path)
    }

    private static func migrate(_ db: Database, file: URL) throws {
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        if version > schemaVersion {
            throw StateError(
                code: .incompatible,
                message:
                    "the ledger \(file.path) has schema \(version), newer than this pipeline reads (\(schemaVersion)); use a newer pipeline or --fresh",
                path: file.path)
        }
        guard version < schemaVersion else { return }
        try db.execute(
            sql: """
                CREATE TABLE runs(
                    id INTEGER PRIMARY KEY, workflow TEXT NOT NULL, file TEXT NOT NULL, stages TEXT NOT NULL,
                    startedAt REAL NOT NULL, finishedAt REAL, summary TEXT);
                CREATE TABLE items(
                    id INTEGER PRIMARY KEY AUTOINCREMENT, workflow TEXT NOT NULL, version INTEGER NOT NULL,
                    fingerprint TEXT NOT NULL, path TEXT NOT NULL, relativePath TEXT NOT NULL,
                    size INTEGER NOT NULL, modified REAL NOT NULL, status TEXT NOT NULL, digest TEXT,
                    error TEXT, errorKind TEXT, meta TEXT, updatedAt REAL NOT NULL);
                CREATE UNIQUE INDEX itemsByFingerprint ON items(workflow, fingerprint);
                CREATE INDEX itemsByPath ON items(workflow, path);
                CREATE TABLE versions(
                    item INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE, version INTEGER NOT NULL,
                    fingerprint TEXT NOT NULL, path TEXT NOT NULL, createdAt REAL NOT NULL,
                    PRIMARY KEY(item, version)) WITHOUT ROWID;
                -- paths: where done items were seen besides the paths their versions were admitted at (a ledger from
                -- before that rule also holds the admitted paths here)
                CREATE TABLE paths(
                    item INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE, path TEXT NOT NULL,
                    PRIMARY KEY(item, path)) WITHOUT ROWID;
                CREATE TABLE stages(
                    item INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE, version INTEGER NOT NULL,
                    stage TEXT NOT NULL, status TEXT NOT NULL, record TEXT NOT NULL,
                    PRIMARY KEY(item, version, stage)) WITHOUT ROWID;
                CREATE TABLE cancelRequests(
                    item INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE, requestedAt REAL NOT NULL);
                CREATE TABLE files(
                    path TEXT PRIMARY KEY, size INTEGER NOT NULL, modifiedNanoseconds INTEGER NOT NULL,
                    inode INTEGER NOT NULL, device INTEGER NOT NULL, method TEXT NOT NULL,
                    fingerprint TEXT NOT NULL, media TEXT) WITHOUT ROWID;
                PRAGMA user_version = \(schemaVersion);
                """)
    }

    /// Tables and indexes added within schema 1, which a pipeline that does not know them ignores: the
    /// notifications sent (``NotificationLog``) and the indexes a dashboard finds, counts and pages items with
    /// (``ItemQuery``): by status, by error kind, by the stage they failed in or run, newest first or by name.
    private static let additions = """
        CREATE TABLE IF NOT EXISTS notifications(key TEXT PRIMARY KEY, sentAt REAL NOT NULL) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS itemsByStatus ON items(workflow, status, updatedAt);
        CREATE INDEX IF NOT EXISTS itemsByStatusAndTime ON items(status, updatedAt);
        CREATE INDEX IF NOT EXISTS itemsByErrorKind ON items(errorKind, updatedAt);
        CREATE INDEX IF NOT EXISTS itemsByTime ON items(updatedAt);
        CREATE INDEX IF NOT EXISTS itemsByName ON items(relativePath);
        CREATE INDEX IF NOT EXISTS stagesByStage ON stages(stage, status);
        """

    /// Counts kept beside the items by triggers, so that a dashboard over 100,000 items reads a few rows instead
    /// of scanning them all: items (and their bytes) by workflow and status, and the items done by the minute of
    /// their last finish. Added within schema 1: a ledger that has no triggers yet gets them with its counts
    /// filled in the same transaction; an older pipeline's writes still fire them.
    static let talliedItems = """
        SELECT workflow, status, count(*) AS count, CAST(total(size) AS INTEGER) AS bytes FROM items GROUP BY 1, 2
        """
    static let talliedMinutes = """
        SELECT workflow, CAST(updatedAt / 60 AS INTEGER) AS minute, count(*) AS count FROM items
        WHERE status = 'succeeded' GROUP BY 1, 2
        """

    /// Where the counts are read from: their tables, or, in a ledger an earlier pipeline made that no writer has
    /// opened since (a dashboard reads it without writing), the same counts computed from the items.
    static func tallies(_ db: Database) throws -> (items: String, minutes: String) {
        try db.tableExists("itemTallies")
            ? ("itemTallies", "doneMinutes") : ("(\(talliedItems))", "(\(talliedMinutes))")
    }

    /// Replaces the webhook URLs that an earlier pipeline recorded at the end of notification keys with their
    /// digests (``WebhookName``): a URL is a webhook's secret, and nothing secret stays in the ledger.
    private static func nameWebhooksByDigest(_ db: Database) throws {
        let keys = try String.fetchAll(
            db, sql: "SELECT key FROM notifications WHERE key GLOB '* http://*' OR key GLOB '* https://*'")
        for key in keys {
            guard let named = WebhookName.replacingURL(in: key) else { continue }
            try db.execute(sql: "UPDATE OR REPLACE notifications SET key = ? WHERE key = ?", arguments: [named, key])
        }
    }

    /// Columns added to `runs` within schema 1: how many files a run takes up that the ledger had no item of, and
    /// how many items the workflow had when it started (``RunRecord/newItems``). An older pipeline names the columns
    /// it writes, so it leaves them empty.
    private static func addRunPlans(_ db: Database) throws {
        guard try !db.columns(in: "runs").contains(where: { $0.name == "newItems" }) else { return }
        try db.execute(
            sql: """
                ALTER TABLE runs ADD COLUMN newItems INTEGER;
                ALTER TABLE runs ADD COLUMN itemsBefore INTEGER;
                """)
    }

    private static func addTallies(_ db: Database) throws {
        guard
            try Bool.fetchOne(
                db, sql: "SELECT NOT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'itemsTalliedOnUpdate')") ?? false
        else { return }
        func counted(_ row: String) -> String {
            """
            UPDATE itemTallies SET count = count - 1, bytes = bytes - \(row).size
                WHERE workflow = \(row).workflow AND status = \(row).status;
            UPDATE doneMinutes SET count = count - 1 WHERE \(row).status = 'succeeded'
                AND workflow = \(row).workflow AND minute = CAST(\(row).updatedAt / 60 AS INTEGER);
            """
        }
        func counting(_ row: String) -> String {
            """
            INSERT INTO itemTallies VALUES (\(row).workflow, \(row).status, 1, \(row).size)
                ON CONFLICT(workflow, status) DO UPDATE SET count = count + 1, bytes = bytes + excluded.bytes;
            INSERT INTO doneMinutes SELECT \(row).workflow, CAST(\(row).updatedAt / 60 AS INTEGER), 1
                WHERE \(row).status = 'succeeded' ON CONFLICT(workflow, minute) DO UPDATE SET count = count + 1;
            """
        }
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS itemTallies(
                    workflow TEXT NOT NULL, status TEXT NOT NULL, count INTEGER NOT NULL, bytes INTEGER NOT NULL,
                    PRIMARY KEY(workflow, status)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS doneMinutes(
                    workflow TEXT NOT NULL, minute INTEGER NOT NULL, count INTEGER NOT NULL,
                    PRIMARY KEY(workflow, minute)) WITHOUT ROWID;
                DELETE FROM itemTallies;
                DELETE FROM doneMinutes;
                INSERT INTO itemTallies \(talliedItems);
                INSERT INTO doneMinutes \(talliedMinutes);
                CREATE TRIGGER itemsTalliedOnInsert AFTER INSERT ON items BEGIN \(counting("NEW")) END;
                CREATE TRIGGER itemsTalliedOnDelete AFTER DELETE ON items BEGIN \(counted("OLD")) END;
                CREATE TRIGGER itemsTalliedOnUpdate AFTER UPDATE OF workflow, status, size, updatedAt ON items
                    BEGIN \(counted("OLD")) \(counting("NEW")) END;
                """)
    }

    // MARK: Plumbing

    /// Runs `body` on the reading connection.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StateError) -> T {
        let pool = self.pool
        do {
            return try await withCheckedThrowingContinuation { continuation in
                pool.asyncRead { result in
                    continuation.resume(with: Result { try body(result.get()) })
                }
            }
        } catch {
            throw Self.stateError(error, file: file, doing: "read")
        }
    }

    public var holdsDeferredCommits: Bool { commits.holdsDeferred }

    /// Runs `body` in a transaction and returns once it is committed and synced (only committed, for a write that
    /// `deferring` names: ``DeferredCommit``). Writes that arrive while a transaction is under way are committed
    /// together in the next one (group commit), each in a savepoint of its own, so concurrent items share one sync
    /// instead of queueing for one each.
    func write<T: Sendable>(
        deferring deferred: DeferredCommit? = nil, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(StateError) -> T {
        do {
            return try await withCheckedThrowingContinuation { continuation in
                let result = NIOLockedValueBox<Result<T, any Error>?>(nil)
                commits.submit(
                    GroupCommit.Write(
                        apply: { db in
                            do {
                                var value: T?
                                try db.inSavepoint {
                                    value = try body(db)
                                    return .commit
                                }
                                result.withLockedValue { $0 = value.map { .success($0) } }
                                return true
                            } catch {
                                result.withLockedValue { $0 = .failure(error) }
                                return false
                            }
                        },
                        complete: { commitError in
                            if let commitError { return continuation.resume(throwing: commitError) }
                            guard let outcome = result.withLockedValue({ $0 }) else {
                                preconditionFailure("a group commit completed a write it did not apply")
                            }
                            continuation.resume(with: outcome)
                        }, deferred: deferred), to: pool)
            }
        } catch {
            throw Self.stateError(error, file: file, doing: "write")
        }
    }

    /// A database error as a ``StateError`` that names the file and says what to do.
    static func stateError(_ error: any Error, file: URL, doing action: String) -> StateError {
        if let error = error as? StateError { return error }
        guard let database = error as? DatabaseError else {
            return StateError(
                code: .corrupt,
                message:
                    "the ledger \(file.path) holds a record this pipeline cannot read (\(error)): run with --fresh to start the workflow over",
                path: file.path)
        }
        switch database.resultCode {
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return StateError(
                code: .corrupt,
                message:
                    "the ledger \(file.path) is damaged (\(database.message ?? "\(database.resultCode)")): move it aside, or run with --fresh to start over",
                path: file.path)
        case .SQLITE_FULL:
            return StateError(
                code: .io, message: "cannot \(action) the ledger \(file.path): the disk is full", path: file.path)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StateError(
                code: .busy, message: "the ledger \(file.path) is locked by another process", path: file.path)
        default:
            return StateError(
                code: .io,
                message: "cannot \(action) the ledger \(file.path): \(database.message ?? "\(database.resultCode)")",
                path: file.path)
        }
    }
}

extension SQLiteLedger {
    /// Refuses a state folder in the layout of earlier versions (one JSON file per stage under `runs/`), or
    /// with `fresh` removes that layout.
    public static func checkLayout(of folder: URL, fresh: Bool) throws(StateError) {
        let runs = folder.appendingPathComponent("runs")
        guard FileManager.default.fileExists(atPath: runs.path) else { return }
        guard fresh else {
            throw StateError(
                code: .incompatible,
                message:
                    "the state folder \(folder.path) holds checkpoints in the layout of an earlier pipeline (one JSON file per stage under \(runs.path)), which this version does not read: finish those runs with the earlier version, or run with --fresh to start over (it deletes \(runs.path))",
                path: runs.path)
        }
        do {
            try FileManager.default.removeItem(at: runs)
        } catch {
            throw StateError(
                code: .io, message: "cannot remove \(runs.path): \(error.localizedDescription)", path: runs.path)
        }
    }

    /// Renames a damaged ledger (and its WAL files) aside, so a new one can start; returns the new name.
    public static func moveAside(in folder: URL) throws(StateError) -> URL {
        let file = folder.appendingPathComponent(fileName)
        let stamp = Int(Date().timeIntervalSince1970)
        let aside = folder.appendingPathComponent("\(fileName).damaged-\(stamp)")
        for suffix in ["", "-wal", "-shm"] {
            let source = file.path + suffix
            guard FileManager.default.fileExists(atPath: source) else { continue }
            guard rename(source, aside.path + suffix) == 0 else {
                throw StateError(
                    code: .io, message: "cannot move \(source) aside: \(String(cString: strerror(errno)))",
                    path: source)
            }
        }
        return aside
    }
}
