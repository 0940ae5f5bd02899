public import Foundation
import GRDB
import NIOConcurrencyHelpers
public import StageKit

/// The ledger in one SQLite database per state folder (`<state>/ledger.sqlite`), through GRDB.
///
/// The database runs in WAL mode with `synchronous = FULL`: a write returns once its transaction is synced,
/// readers in other processes (`pipeline status`, `pipeline plan`) never wait for the writer, and a crash at
/// any moment leaves the last committed state. Writes go through GRDB's writer queue and are not abandoned when the calling
/// task is cancelled, so an interrupted stage is still recorded as interrupted.
public final class SQLiteLedger: StateStore {
    /// The database file.
    public let file: URL
    private let pool: any DatabaseWriter
    private let commits = GroupCommit()

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
            try pool.write { db in try Self.migrate(db, file: file) }
            self.pool = pool
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

    /// Closes the database: a clean close folds the write-ahead log into the database file and removes it,
    /// so the state folder is one file again. Later calls fail.
    public func close() throws(StateError) {
        do {
            try pool.close()
        } catch {
            throw Self.stateError(error, file: file, doing: "close")
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

    // MARK: Reading

    public func snapshot(workflow: String) async throws(StateError) -> LedgerSnapshot {
        LedgerSnapshot(items: try await items(where: "workflow = ? ORDER BY id", arguments: [workflow]))
    }

    /// The columns ``item(_:)`` reads, in order (by position: a large ledger is read many rows a second).
    private static let itemColumns =
        "id, version, fingerprint, path, relativePath, size, modified, meta, status, digest, error, errorKind, updatedAt"

    private static func item(_ row: Row) -> LedgerItem {
        let error: FailureReport? = (row[10] as String?).map { message in
            FailureReport(message: message, kind: (row[11] as String?).map { ErrorKind(rawValue: $0) } ?? .failed)
        }
        return LedgerItem(
            id: row[0], version: row[1], fingerprint: row[2],
            input: InputItem(
                path: row[3], relativePath: row[4], size: row[5], modified: row[6],
                meta: (row[7] as String?).flatMap { try? JSONValue(parsing: $0).objectValue } ?? [:]),
            status: ItemStatus(rawValue: row[8]) ?? .pending, digest: row[9], error: error,
            updatedAt: Date(timeIntervalSince1970: row[12]))
    }

    public func items(workflow: String, pathsFrom first: String, through last: String) async throws(StateError)
        -> [LedgerItem]
    {
        try await items(
            where: "workflow = ? AND path BETWEEN ? AND ?", arguments: [workflow, first, last])
    }

    public func items(workflow: String, fingerprints: [String]) async throws(StateError) -> [LedgerItem] {
        guard !fingerprints.isEmpty else { return [] }
        // One statement per chunk of fingerprints, well under SQLite's limit of 32,766 parameters.
        let list = String(repeating: "?,", count: fingerprints.count - 1) + "?"
        return try await items(
            where: "workflow = ? AND fingerprint IN (\(list))", arguments: StatementArguments([workflow] + fingerprints)
        )
    }

    private func items(where condition: String, arguments: StatementArguments) async throws(StateError)
        -> [LedgerItem]
    {
        try await read { db in
            var items: [LedgerItem] = []
            let rows = try Row.fetchCursor(
                db, sql: "SELECT \(Self.itemColumns) FROM items WHERE \(condition)", arguments: arguments)
            while let row = try rows.next() { items.append(Self.item(row)) }
            return items
        }
    }

    public func cachedFingerprints(pathsFrom first: String, through last: String) async throws(StateError)
        -> [String: FingerprintCacheEntry]
    {
        try await read { db in
            var entries: [String: FingerprintCacheEntry] = [:]
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT path, size, modifiedNanoseconds, inode, device, method, fingerprint, media FROM files
                    WHERE path BETWEEN ? AND ?
                    """, arguments: [first, last])
            while let row = try rows.next() {
                guard let method = FingerprintMethod(rawValue: row[5]) else { continue }
                let stamp = FileStamp(
                    path: row[0], size: row[1], modifiedNanoseconds: row[2], inode: row[3], device: row[4])
                let media = (row[7] as String?).flatMap { text in
                    try? JSONDecoder().decode(MediaProbeResult.self, from: Data(text.utf8))
                }
                entries[stamp.path] = FingerprintCacheEntry(
                    stamp: stamp, method: method, fingerprint: row[6], media: media)
            }
            return entries
        }
    }

    public func checkpoints(workflow: String, items: Set<Int64>?) async throws(StateError) -> [Int64: [String:
        StageRecord]]
    {
        try await records(workflow: workflow, items: items, condition: "stages.version = items.version")
    }

    /// Stage records of a workflow's items (those in `items`, or all) whose row meets `condition`, by item
    /// number and stage id; records of other items are not decoded.
    /// The stage records of a workflow's items (nil: all of them) that meet `condition`. A few items are
    /// looked up by id, a thousand at a time; many (or all) are read in one pass over the workflow's records.
    private func records(workflow: String, items: Set<Int64>?, condition: String) async throws(StateError)
        -> [Int64: [String: StageRecord]]
    {
        let sql = """
            SELECT stages.item, stages.stage, stages.record FROM stages JOIN items ON items.id = stages.item
            WHERE items.workflow = ? AND \(condition)
            """
        guard let items, items.count <= 10_000 else {
            return try await read { db in
                var found: [Int64: [String: StageRecord]] = [:]
                let rows = try Row.fetchCursor(db, sql: sql, arguments: [workflow])
                while let row = try rows.next() {
                    let item: Int64 = row[0]
                    guard items?.contains(item) ?? true else { continue }
                    found[item, default: [:]][row[1]] = try StageRecord(decoding: row[2])
                }
                return found
            }
        }
        let ids = Array(items)
        return try await read { db in
            var found: [Int64: [String: StageRecord]] = [:]
            for start in stride(from: 0, to: ids.count, by: 1_000) {
                let chunk = ids[start..<min(start + 1_000, ids.count)]
                let list = String(repeating: "?,", count: chunk.count - 1) + "?"
                let rows = try Row.fetchCursor(
                    db, sql: sql + " AND stages.item IN (\(list))",
                    arguments: StatementArguments([workflow] + chunk.map { $0 as any DatabaseValueConvertible }))
                while let row = try rows.next() {
                    found[row[0] as Int64, default: [:]][row[1]] = try StageRecord(decoding: row[2])
                }
            }
            return found
        }
    }

    public func workflows() async throws(StateError) -> [RunRecord] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT workflow, file, stages FROM runs WHERE id IN (SELECT max(id) FROM runs GROUP BY workflow)
                    ORDER BY workflow
                    """
            ).map { row in
                RunRecord(
                    workflow: row["workflow"], file: row["file"],
                    stages: (row["stages"] as String).split(separator: "\n").map(String.init))
            }
        }
    }

    // MARK: Writing

    public func cacheFingerprints(_ entries: [FingerprintCacheEntry]) async throws(StateError) {
        guard !entries.isEmpty else { return }
        try await write { db in try Self.cache(entries, in: db) }
    }

    private static func cache(_ entries: [FingerprintCacheEntry], in db: Database) throws {
        let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        for entry in entries {
            let stamp = entry.stamp
            let media = entry.media.flatMap { try? JSONEncoder().encode($0) }.map {
                String(decoding: $0, as: UTF8.self)
            }
            try statement.execute(arguments: [
                stamp.path, stamp.size, stamp.modifiedNanoseconds, stamp.inode, stamp.device,
                entry.method.rawValue, entry.fingerprint, media,
            ])
        }
    }

    /// One commit: a run's start costs a single sync of the log.
    public func beginRun(_ run: RunRecord, caching entries: [FingerprintCacheEntry], sightings: [ItemSighting])
        async throws(StateError) -> Int64
    {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO runs(workflow, file, stages, startedAt) VALUES (?, ?, ?, ?)",
                arguments: [run.workflow, run.file, run.stages.joined(separator: "\n"), Date().timeIntervalSince1970])
            let id = db.lastInsertedRowID
            try Self.cache(entries, in: db)
            try Self.record(sightings, in: db)
            return id
        }
    }

    public func finishRun(_ run: Int64, summary: RunSummary) async throws(StateError) {
        let totals = JSONValue.object(summary.fields).serialized()
        try await write { db in
            try db.execute(
                sql: "UPDATE runs SET finishedAt = ?, summary = ? WHERE id = ?",
                arguments: [Date().timeIntervalSince1970, totals, run])
        }
    }

    public func admit(_ admission: ItemAdmission, workflow: String) async throws(StateError) -> AdmittedItem {
        try await write { db in
            let now = Date().timeIntervalSince1970
            let input = admission.input
            var ref: ItemVersion
            if let id = admission.item,
                let version = try Int.fetchOne(db, sql: "SELECT version FROM items WHERE id = ?", arguments: [id])
            {
                ref = ItemVersion(item: id, version: admission.newVersion ? version + 1 : version)
                try db.execute(
                    sql: """
                        UPDATE items SET version = ?, fingerprint = ?, path = ?, relativePath = ?, size = ?,
                        modified = ?, meta = ?, status = 'pending', digest = CASE WHEN ? THEN NULL ELSE digest END,
                        updatedAt = ? WHERE id = ?
                        """,
                    arguments: [
                        ref.version, admission.fingerprint, input.path, input.relativePath, input.size,
                        input.modified, Self.meta(input), admission.newVersion, now, id,
                    ])
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO items(
                            workflow, version, fingerprint, path, relativePath, size, modified, meta, status, updatedAt)
                        VALUES (?, 1, ?, ?, ?, ?, ?, ?, 'pending', ?)
                        """,
                    arguments: [
                        workflow, admission.fingerprint, input.path, input.relativePath, input.size, input.modified,
                        Self.meta(input), now,
                    ])
                ref = ItemVersion(item: db.lastInsertedRowID, version: 1)
            }
            try db.execute(
                sql: "INSERT OR IGNORE INTO versions VALUES (?, ?, ?, ?, ?)",
                arguments: [ref.item, ref.version, admission.fingerprint, input.path, now])
            try db.execute(sql: "INSERT OR IGNORE INTO paths VALUES (?, ?)", arguments: [ref.item, input.path])
            // Only the previous version's outputs stay reachable (`${previous.*}`); older checkpoints go. A stage
            // the previous version did not finish keeps the outputs of the version before, which did, so a
            // remote object an earlier version made is still found (and updated, not made again).
            let (item, older, previousVersion) = (ref.item, ref.version - 2, ref.version - 1)
            try db.execute(
                sql: """
                    DELETE FROM stages WHERE item = ? AND version = ? AND status != 'succeeded' AND stage IN (
                        SELECT stage FROM stages WHERE item = ? AND version = ? AND status = 'succeeded')
                    """, arguments: [item, previousVersion, item, older])
            try db.execute(
                sql: """
                    UPDATE stages SET version = ? WHERE item = ? AND version = ? AND status = 'succeeded'
                        AND stage NOT IN (SELECT stage FROM stages WHERE item = ? AND version = ?)
                    """, arguments: [previousVersion, item, older, item, previousVersion])
            try db.execute(
                sql: "DELETE FROM stages WHERE item = ? AND version < ?", arguments: [item, previousVersion])
            var stages: [String: StageRecord] = [:]
            var previous: [String: JSONValue] = [:]
            let rows = try Row.fetchCursor(
                db, sql: "SELECT version, stage, status, record FROM stages WHERE item = ? AND version >= ?",
                arguments: [ref.item, ref.version - 1])
            while let row = try rows.next() {
                if row["version"] == ref.version {
                    stages[row["stage"]] = try StageRecord(decoding: row["record"])
                } else if row["status"] == StageRecord.Status.succeeded.rawValue {
                    previous[row["stage"]] = try StageRecord(decoding: row["record"]).outputs ?? .null
                }
            }
            return AdmittedItem(ref: ref, stages: stages, previousOutputs: previous)
        }
    }

    public func recordPaths(_ sightings: [ItemSighting]) async throws(StateError) {
        guard !sightings.isEmpty else { return }
        try await write { db in try Self.record(sightings, in: db) }
    }

    private static func record(_ sightings: [ItemSighting], in db: Database) throws {
        let update = try db.cachedStatement(
            sql: "UPDATE items SET path = ?, relativePath = ?, size = ?, modified = ?, meta = ? WHERE id = ?")
        let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO paths VALUES (?, ?)")
        for sighting in sightings {
            let input = sighting.input
            try update.execute(arguments: [
                input.path, input.relativePath, input.size, input.modified, meta(input), sighting.item,
            ])
            try insert.execute(arguments: [sighting.item, input.path])
        }
    }

    public func save(_ record: StageRecord, for item: ItemVersion) async throws(StateError) {
        let encoded = try record.encoded()
        try await write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO stages VALUES (?, ?, ?, ?, ?)",
                arguments: [item.item, item.version, record.stage, record.status.rawValue, encoded])
        }
    }

    public func removeStages(_ stages: [String], for item: ItemVersion) async throws(StateError) {
        guard !stages.isEmpty else { return }
        try await write { db in
            let statement = try db.cachedStatement(
                sql: "DELETE FROM stages WHERE item = ? AND version = ? AND stage = ?")
            for stage in stages { try statement.execute(arguments: [item.item, item.version, stage]) }
        }
    }

    public func finish(_ item: ItemVersion, result: ItemResult, digest: String?) async throws(StateError) {
        let status: ItemStatus? =
            switch result.outcome {
            case .done: .succeeded
            case .failed: .failed
            case .interrupted: .interrupted
            case .reused, .skipped: nil
            }
        guard let status else { return }
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE items SET status = ?, digest = ?, error = ?, errorKind = ?, updatedAt = ?
                    WHERE id = ? AND version = ?
                    """,
                arguments: [
                    status.rawValue, digest, status == .failed ? result.reason : nil,
                    status == .failed ? result.errorKind?.description : nil, Date().timeIntervalSince1970, item.item,
                    item.version,
                ])
        }
    }

    public func setStatus(_ status: ItemStatus, of items: [Int64]) async throws(StateError) {
        try await write { db in
            let statement = try db.cachedStatement(sql: "UPDATE items SET status = ?, updatedAt = ? WHERE id = ?")
            let answered = try db.cachedStatement(sql: "DELETE FROM cancelRequests WHERE item = ?")
            for item in items {
                try statement.execute(arguments: [status.rawValue, Date().timeIntervalSince1970, item])
                if status == .cancelled { try answered.execute(arguments: [item]) }
            }
        }
    }

    public func requestCancel(of items: [Int64]) async throws(StateError) {
        try await write { db in
            let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO cancelRequests VALUES (?, ?)")
            for item in items { try statement.execute(arguments: [item, Date().timeIntervalSince1970]) }
        }
    }

    public func answerCancelRequests(for items: [Int64]) async throws(StateError) {
        try await write { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM cancelRequests WHERE item = ?")
            for item in items { try statement.execute(arguments: [item]) }
        }
    }

    public func cancelRequests(workflow: String) async throws(StateError) -> Set<Int64> {
        try await read { db in
            Set(
                try Int64.fetchAll(
                    db,
                    sql: """
                        SELECT cancelRequests.item FROM cancelRequests JOIN items ON items.id = cancelRequests.item
                        WHERE items.workflow = ?
                        """, arguments: [workflow]))
        }
    }

    public func forget(items: [Int64]) async throws(StateError) {
        try await write { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM items WHERE id = ?")
            for item in items { try statement.execute(arguments: [item]) }
        }
    }

    public func forget(workflow: String) async throws(StateError) {
        // The item's versions, paths, stages and cancel requests go with it (ON DELETE CASCADE).
        try await write { db in
            try db.execute(sql: "DELETE FROM items WHERE workflow = ?", arguments: [workflow])
        }
    }

    public func previousOutputs(workflow: String, items: Set<Int64>?) async throws(StateError)
        -> [Int64: [String: JSONValue]]
    {
        try await records(
            workflow: workflow, items: items,
            condition: "stages.version = items.version - 1 AND stages.status = 'succeeded'"
        ).mapValues { $0.mapValues { $0.outputs ?? .null } }
    }

    // MARK: Plumbing

    /// An input's metadata as stored (nil when it has none).
    private static func meta(_ input: InputItem) -> String? {
        input.meta.isEmpty ? nil : JSONValue.object(input.meta).serialized()
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StateError) -> T {
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

    /// Runs `body` in a transaction and returns once it is committed and synced. Writes that arrive while a
    /// transaction is under way are committed together in the next one (group commit), each in a savepoint
    /// of its own, so concurrent items share one sync instead of queueing for one each.
    private func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StateError) -> T {
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
                            } catch {
                                result.withLockedValue { $0 = .failure(error) }
                            }
                        },
                        complete: { commitError in
                            if let commitError { return continuation.resume(throwing: commitError) }
                            guard let outcome = result.withLockedValue({ $0 }) else {
                                preconditionFailure("a group commit completed a write it did not apply")
                            }
                            continuation.resume(with: outcome)
                        }), to: pool)
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

/// Writes waiting for a transaction of the ledger: one transaction commits every write queued while the
/// previous one was under way.
final class GroupCommit: Sendable {
    /// One write: `apply` runs inside the transaction, `complete` after its commit (with the commit's error).
    struct Write: Sendable {
        var apply: @Sendable (Database) -> Void
        var complete: @Sendable ((any Error)?) -> Void
    }

    private struct Queue {
        var writes: [Write] = []
        var draining = false
    }

    private let queue = NIOLockedValueBox(Queue())

    /// Queues a write; starts a transaction on the writer unless one is under way (it takes this write next).
    func submit(_ write: Write, to writer: any DatabaseWriter) {
        let start = queue.withLockedValue { queue -> Bool in
            queue.writes.append(write)
            guard !queue.draining else { return false }
            queue.draining = true
            return true
        }
        guard start else { return }
        writer.asyncWriteWithoutTransaction { db in
            while true {
                let batch = self.queue.withLockedValue { queue -> [Write] in
                    let batch = queue.writes
                    queue.writes = []
                    if batch.isEmpty { queue.draining = false }
                    return batch
                }
                guard !batch.isEmpty else { return }
                do {
                    try db.inTransaction {
                        for write in batch { write.apply(db) }
                        return .commit
                    }
                    for write in batch { write.complete(nil) }
                } catch {
                    for write in batch { write.complete(error) }
                }
            }
        }
    }
}
