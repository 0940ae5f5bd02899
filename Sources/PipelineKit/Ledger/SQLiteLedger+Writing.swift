import Foundation
import GRDB
import StageKit

// The ledger's writes. Each is one transaction (``write(_:)``), committed with the writes queued beside it.
extension SQLiteLedger {
    public func cacheFingerprints(_ entries: [FingerprintCacheEntry]) async throws(StateError) {
        guard !entries.isEmpty else { return }
        try await write { db in try Self.cache(entries, in: db) }
    }

    private static func cache(_ entries: [FingerprintCacheEntry], in db: Database) throws {
        let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        for entry in entries {
            let stamp = entry.stamp
            try statement.execute(arguments: [
                stamp.path, stamp.size, stamp.modifiedNanoseconds, stamp.inode, stamp.device,
                entry.method.rawValue, entry.fingerprint, entry.storedMedia,
            ])
        }
    }

    /// One commit, synced with the first stage's start (``DeferredCommit/runStart``).
    public func beginRun(_ run: RunRecord, caching entries: [FingerprintCacheEntry], sightings: [ItemSighting])
        async throws(StateError) -> Int64
    {
        try await write(deferring: .runStart) { db in
            let itemsBefore = try Int.fetchOne(
                db, sql: "SELECT count(*) FROM items WHERE workflow = ?", arguments: [run.workflow])
            try db.execute(
                sql: """
                    INSERT INTO runs(workflow, file, stages, startedAt, newItems, itemsBefore)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    run.workflow, run.file, run.stages.joined(separator: "\n"), Date().timeIntervalSince1970,
                    run.newItems, itemsBefore,
                ])
            let id = db.lastInsertedRowID
            try Self.cache(entries, in: db)
            try Self.record(sightings, in: db)
            return id
        }
    }

    public func finishRun(_ run: Int64, summary: RunSummary) async throws(StateError) {
        let totals = JSONValue.object(summary.fields).serialized()
        try await write(deferring: .runEnd) { db in
            try db.execute(
                sql: "UPDATE runs SET finishedAt = ?, summary = ? WHERE id = ?",
                arguments: [Date().timeIntervalSince1970, totals, run])
        }
    }

    public func admit(_ admission: ItemAdmission, workflow: String) async throws(StateError) -> AdmittedItem {
        try await write(deferring: .admission) { db in
            let ref = try Self.itemVersion(admitting: admission, workflow: workflow, in: db)
            let input = admission.input
            try db.execute(
                sql: "INSERT OR IGNORE INTO versions VALUES (?, ?, ?, ?, ?)",
                arguments: [ref.item, ref.version, admission.fingerprint, input.path, Date().timeIntervalSince1970])
            // The path an item is admitted at is its version's: `paths` adds only the paths it was seen at while
            // done (``recordPaths(_:)``), not a second copy of every item's path.
            return try Self.compactCheckpoints(admitting: ref, in: db)
        }
    }

    /// Updates the item's row for an admission (makes it, for content the workflow does not have) and returns
    /// the version it is at now. An item that is gone is made again; new content the workflow already has takes
    /// up that item (the ledger is keyed by content).
    private static func itemVersion(admitting admission: ItemAdmission, workflow: String, in db: Database) throws
        -> ItemVersion
    {
        let now = Date().timeIntervalSince1970
        let input = admission.input
        if let id = admission.item,
            let version = try Int.fetchOne(
                db,
                sql: """
                    UPDATE items SET version = version + ?, fingerprint = ?, path = ?, relativePath = ?, size = ?,
                    modified = ?, meta = ?, status = 'pending', digest = CASE WHEN ? THEN NULL ELSE digest END,
                    updatedAt = ? WHERE id = ? RETURNING version
                    """,
                arguments: [
                    admission.versionStep, admission.fingerprint, input.path, input.relativePath, input.size,
                    input.modified, input.storedMeta, admission.newVersion, now, id,
                ])
        {
            return ItemVersion(item: id, version: version)
        }
        let row = try Row.fetchOne(
            db,
            sql: """
                INSERT INTO items(
                    workflow, version, fingerprint, path, relativePath, size, modified, meta, status, updatedAt)
                VALUES (?, 1, ?, ?, ?, ?, ?, ?, 'pending', ?)
                ON CONFLICT(workflow, fingerprint) DO UPDATE SET path = excluded.path,
                    relativePath = excluded.relativePath, status = 'pending', updatedAt = excluded.updatedAt
                RETURNING id, version
                """,
            arguments: [
                workflow, admission.fingerprint, input.path, input.relativePath, input.size, input.modified,
                input.storedMeta, now,
            ])
        guard let row else { throw StateError(code: .corrupt, message: "an admitted item has no row", path: "") }
        return ItemVersion(item: row[0], version: row[1])
    }

    /// Carries out the ``CheckpointCompaction`` of admitting `ref`, and returns the item as admitted.
    private static func compactCheckpoints(admitting ref: ItemVersion, in db: Database) throws -> AdmittedItem {
        var rows: [StoredCheckpoint] = []
        let cursor = try Row.fetchCursor(
            db, sql: "SELECT version, stage, status, record FROM stages WHERE item = ? AND version >= ?",
            arguments: [ref.item, ref.version - 2])
        while let row = try cursor.next() {
            rows.append(StoredCheckpoint(version: row[0], stage: row[1], status: row[2], record: row[3]))
        }
        let compaction = try CheckpointCompaction(admitting: ref, rows: rows)
        let replaced = try db.cachedStatement(sql: "DELETE FROM stages WHERE item = ? AND version = ? AND stage = ?")
        let carried = try db.cachedStatement(
            sql: "UPDATE stages SET version = ? WHERE item = ? AND version = ? AND stage = ?")
        for stage in compaction.carried {
            try replaced.execute(arguments: [ref.item, compaction.previous, stage])
            try carried.execute(arguments: [compaction.previous, ref.item, compaction.older, stage])
        }
        try db.execute(
            sql: "DELETE FROM stages WHERE item = ? AND version < ?", arguments: [ref.item, compaction.previous])
        return compaction.admitted
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
                input.path, input.relativePath, input.size, input.modified, input.storedMeta, sighting.item,
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
        guard let ending = ItemEnding(result) else { return }
        try await write(deferring: .itemEnd) { db in
            try db.execute(
                sql: """
                    UPDATE items SET status = ?, digest = ?, error = ?, errorKind = ?, updatedAt = ?
                    WHERE id = ? AND version = ?
                    """,
                arguments: [
                    ending.status.rawValue, digest, ending.error, ending.errorKind, Date().timeIntervalSince1970,
                    item.item, item.version,
                ])
        }
    }

    public func setStatus(_ status: ItemStatus, of items: [Int64]) async throws(StateError) {
        try await write { db in
            let statement = try db.cachedStatement(sql: "UPDATE items SET status = ?, updatedAt = ? WHERE id = ?")
            let answered = try db.cachedStatement(sql: "DELETE FROM cancelRequests WHERE item = ?")
            for item in items {
                try statement.execute(arguments: [status.rawValue, Date().timeIntervalSince1970, item])
                if status.answersCancelRequest { try answered.execute(arguments: [item]) }
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

    public func forget(items: [Int64]) async throws(StateError) {
        try await write { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM items WHERE id = ?")
            for item in items { try statement.execute(arguments: [item]) }
        }
    }

    @discardableResult public func forget(workflow: String) async throws(StateError) -> [Int64] {
        // The item's versions, paths, stages and cancel requests go with it (ON DELETE CASCADE).
        try await write { db in
            try Int64.fetchAll(db, sql: "DELETE FROM items WHERE workflow = ? RETURNING id", arguments: [workflow])
        }
    }
}
