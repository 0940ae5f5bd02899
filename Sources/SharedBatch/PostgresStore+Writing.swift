import Foundation
import Logging
public import PipelineKit
import PostgresNIO
import StageKit

// The store's writes: each is one transaction, on a worker fenced by the item's lease (``write(_:_:_:)``).
extension PostgresStore {
    public func cacheFingerprints(_ entries: [FingerprintCacheEntry]) async throws(StateError) {
        guard !entries.isEmpty else { return }
        let logger = database.logger
        try await database.transaction("save fingerprints") { connection in
            try await Self.cache(entries, on: connection, logger: logger)
        }
    }

    /// Saves fingerprint cache entries, a thousand to a statement.
    private static func cache(_ entries: [FingerprintCacheEntry], on connection: PostgresConnection, logger: Logger)
        async throws
    {
        for start in stride(from: 0, to: entries.count, by: 1_000) {
            let chunk = entries[start..<min(start + 1_000, entries.count)]
            try await connection.query(
                """
                INSERT INTO files
                SELECT path, size, modified_ns, inode, device, method, fingerprint, NULLIF(media, '') FROM unnest(
                    \(chunk.map(\.stamp.path)), \(chunk.map(\.stamp.size)), \(chunk.map(\.stamp.modifiedNanoseconds)),
                    \(chunk.map(\.stamp.inode)), \(chunk.map(\.stamp.device)), \(chunk.map(\.method.rawValue)),
                    \(chunk.map(\.fingerprint)), \(chunk.map { $0.storedMedia ?? "" }))
                    AS entry(path, size, modified_ns, inode, device, method, fingerprint, media)
                ON CONFLICT (path) DO UPDATE SET size = EXCLUDED.size, modified_ns = EXCLUDED.modified_ns,
                    inode = EXCLUDED.inode, device = EXCLUDED.device, method = EXCLUDED.method,
                    fingerprint = EXCLUDED.fingerprint, media = EXCLUDED.media
                """, logger: logger)
        }
    }

    /// One transaction: the run, the fingerprints and where items are now are committed together or not at all.
    public func beginRun(_ run: RunRecord, caching entries: [FingerprintCacheEntry], sightings: [ItemSighting])
        async throws(StateError) -> Int64
    {
        let logger = database.logger
        return try await database.transaction("record the run") { connection in
            var id: Int64 = 0
            for try await row in try await connection.query(
                """
                INSERT INTO runs(workflow, file, stages) VALUES (\(run.workflow), \(run.file),
                    \(run.stages.joined(separator: "\n"))) RETURNING id
                """, logger: logger)
            {
                id = try row.decode(Int64.self)
            }
            try await Self.cache(entries, on: connection, logger: logger)
            try await Self.record(sightings, on: connection, logger: logger)
            return id
        }
    }

    public func finishRun(_ run: Int64, summary: RunSummary) async throws(StateError) {
        let totals = JSONValue.object(summary.fields).serialized()
        try await database.rows(
            "record the run", "UPDATE runs SET finished_at = now(), summary = \(totals) WHERE id = \(run)")
    }

    public func admit(_ admission: ItemAdmission, workflow: String) async throws(StateError) -> AdmittedItem {
        let input = admission.input
        // A command (not a worker) that takes an item up fences out any worker still holding it.
        let fencesOut = leases == nil
        let logger = database.logger
        return try await write(admission.item, "admit an item") { connection in
            let ref = try await Self.itemVersion(
                admitting: admission, workflow: workflow, fencingOut: fencesOut, on: connection, logger: logger)
            let (item, version) = (ref.item, Int32(ref.version))
            try await connection.query(
                """
                INSERT INTO versions(item, version, fingerprint, path)
                VALUES (\(item), \(version), \(admission.fingerprint), \(input.path)) ON CONFLICT DO NOTHING
                """, logger: logger)
            // As in the SQLite ledger, `paths` holds only the paths a done item was seen at: the path it is
            // admitted at is its version's.
            return try await Self.compactCheckpoints(admitting: ref, on: connection, logger: logger)
        }
    }

    /// Updates the item's row for an admission (makes it, for content the workflow does not have) and returns
    /// the version it is at now. An item that is gone is made again; new content the workflow already has takes
    /// up that item (a second submit of the same file finds the item it made).
    private static func itemVersion(
        admitting admission: ItemAdmission, workflow: String, fencingOut: Bool, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> ItemVersion {
        let input = admission.input
        let meta = input.storedMeta
        if let id = admission.item {
            let rows = try await connection.query(
                """
                UPDATE items SET version = version + \(admission.versionStep),
                    fingerprint = \(admission.fingerprint), path = \(input.path),
                    relative_path = \(input.relativePath), size = \(input.size), modified = \(input.modified),
                    meta = \(meta), status = 'pending',
                    digest = CASE WHEN \(admission.newVersion) THEN NULL ELSE digest END, updated_at = now(),
                    lease_generation = lease_generation + \(fencingOut ? 1 : 0)
                WHERE id = \(id) RETURNING version
                """, logger: logger)
            var version: Int32?
            for try await row in rows { version = try row.decode(Int32.self) }
            if let version { return ItemVersion(item: id, version: Int(version)) }
        }
        let rows = try await connection.query(
            """
            INSERT INTO items(workflow, version, fingerprint, path, relative_path, size, modified, meta, status)
            VALUES (\(workflow), 1, \(admission.fingerprint), \(input.path), \(input.relativePath),
                \(input.size), \(input.modified), \(meta), 'pending')
            ON CONFLICT (workflow, fingerprint) DO UPDATE SET path = EXCLUDED.path,
                relative_path = EXCLUDED.relative_path, status = 'pending', updated_at = now()
            RETURNING id, version
            """, logger: logger)
        var made: ItemVersion?
        for try await row in rows {
            let (id, version) = try row.decode((Int64, Int32).self)
            made = ItemVersion(item: id, version: Int(version))
        }
        guard let made else { throw StateError(code: .corrupt, message: "an admitted item has no row", path: "") }
        return made
    }

    /// Carries out the ``CheckpointCompaction`` of admitting `ref`, and returns the item as admitted.
    private static func compactCheckpoints(
        admitting ref: ItemVersion, on connection: PostgresConnection, logger: Logger
    ) async throws -> AdmittedItem {
        let item = ref.item
        var stored: [StoredCheckpoint] = []
        for try await row in try await connection.query(
            """
            SELECT version, stage, status, record FROM stages
            WHERE item = \(item) AND version >= \(Int32(ref.version - 2))
            """, logger: logger)
        {
            let (version, stage, status, record) = try row.decode((Int32, String, String, String).self)
            stored.append(StoredCheckpoint(version: Int(version), stage: stage, status: status, record: record))
        }
        let compaction = try CheckpointCompaction(admitting: ref, rows: stored)
        let (older, previous) = (Int32(compaction.older), Int32(compaction.previous))
        if !compaction.carried.isEmpty {
            try await connection.query(
                """
                DELETE FROM stages WHERE item = \(item) AND version = \(previous) AND stage = ANY(\(compaction.carried))
                """, logger: logger)
            try await connection.query(
                """
                UPDATE stages SET version = \(previous)
                WHERE item = \(item) AND version = \(older) AND stage = ANY(\(compaction.carried))
                """, logger: logger)
        }
        try await connection.query(
            "DELETE FROM stages WHERE item = \(item) AND version < \(previous)", logger: logger)
        return compaction.admitted
    }

    public func recordPaths(_ sightings: [ItemSighting]) async throws(StateError) {
        guard !sightings.isEmpty else { return }
        let logger = database.logger
        try await write(nil, "record where items are") { connection in
            try await Self.record(sightings, on: connection, logger: logger)
        }
    }

    /// Records where finished items are now.
    private static func record(_ sightings: [ItemSighting], on connection: PostgresConnection, logger: Logger)
        async throws
    {
        for sighting in sightings {
            let input = sighting.input
            try await connection.query(
                """
                UPDATE items SET path = \(input.path), relative_path = \(input.relativePath),
                    size = \(input.size), modified = \(input.modified), meta = \(input.storedMeta)
                WHERE id = \(sighting.item)
                """, logger: logger)
            try await connection.query(
                "INSERT INTO paths VALUES (\(sighting.item), \(input.path)) ON CONFLICT DO NOTHING", logger: logger)
        }
    }

    public func save(_ record: StageRecord, for item: ItemVersion) async throws(StateError) {
        let encoded = try record.encoded()
        try await write(item.item, "save a checkpoint") { connection in
            try await connection.query(
                """
                INSERT INTO stages VALUES (\(item.item), \(Int32(item.version)), \(record.stage),
                    \(record.status.rawValue), \(encoded))
                ON CONFLICT (item, version, stage) DO UPDATE SET status = EXCLUDED.status, record = EXCLUDED.record
                """, logger: self.database.logger)
            guard record.status == .succeeded else { return }
            // A stage done for the first time since the item was queued is progress (``TakeoverLimit``).
            try await connection.query(
                """
                UPDATE items SET done_stages = array_append(done_stages, \(record.stage)), takeovers = 0,
                    suspect = false
                WHERE id = \(item.item) AND NOT (\(record.stage) = ANY(done_stages))
                """, logger: self.database.logger)
        }
    }

    public func removeStages(_ stages: [String], for item: ItemVersion) async throws(StateError) {
        guard !stages.isEmpty else { return }
        try await write(item.item, "remove checkpoints") { connection in
            try await connection.query(
                """
                DELETE FROM stages WHERE item = \(item.item) AND version = \(Int32(item.version))
                    AND stage = ANY(\(stages))
                """, logger: self.database.logger)
        }
    }

    /// Records how an item ended. A success or a failure leaves the queue (a later `submit` queues a failed item
    /// again): on a worker, which lets its lease go too (an interrupted item stays queued for the next worker), and
    /// at `submit`, which records a new version of a queued item as failed (damaged, or refused for another item's
    /// file) unless a worker holds the item.
    public func finish(_ item: ItemVersion, result: ItemResult, digest: String?) async throws(StateError) {
        let ending = ItemEnding(result)
        let dequeue = ending?.status == .succeeded || ending?.status == .failed
        try await write(item.item, "record how an item ended") { connection in
            if let ending {
                try await connection.query(
                    """
                    UPDATE items SET status = \(ending.status.rawValue), digest = \(digest), error = \(ending.error),
                        error_kind = \(ending.errorKind), updated_at = now()
                    WHERE id = \(item.item) AND version = \(Int32(item.version))
                    """, logger: self.database.logger)
            }
            if self.leases != nil {
                try await connection.query(
                    """
                    UPDATE items SET lease_owner = NULL, lease_expires = NULL,
                        queued_with = CASE WHEN \(dequeue) THEN NULL ELSE queued_with END
                    WHERE id = \(item.item) AND version = \(Int32(item.version))
                    """, logger: self.database.logger)
            } else if dequeue {
                try await connection.query(
                    """
                    UPDATE items SET queued_with = NULL
                    WHERE id = \(item.item) AND version = \(Int32(item.version))
                        AND (lease_expires IS NULL OR lease_expires <= now())
                    """, logger: self.database.logger)
            }
        }
    }

    /// Sets items' status; a cancelled item leaves the queue. Outside a worker (`pipeline cancel`), the item's
    /// lease generation is raised too, so that a worker that still holds it (stalled, or about to see the cancel)
    /// can write nothing more for it.
    public func setStatus(_ status: ItemStatus, of items: [Int64]) async throws(StateError) {
        let fencesOut = leases == nil
        for item in items {
            try await write(item, "set an item's status") { connection in
                try await connection.query(
                    """
                    UPDATE items SET status = \(status.rawValue), updated_at = now(),
                        queued_with = CASE WHEN \(status == .cancelled) THEN NULL ELSE queued_with END,
                        lease_generation = lease_generation + \(fencesOut ? 1 : 0)
                    WHERE id = \(item)
                    """, logger: self.database.logger)
                if status.answersCancelRequest {
                    try await connection.query(
                        "DELETE FROM cancel_requests WHERE item = \(item)", logger: self.database.logger)
                }
            }
        }
    }

    public func requestCancel(of items: [Int64]) async throws(StateError) {
        try await database.rows(
            "ask for a cancel",
            """
            INSERT INTO cancel_requests(item) SELECT unnest(\(items))
            ON CONFLICT (item) DO UPDATE SET requested_at = now()
            """)
    }

    public func answerCancelRequests(for items: [Int64]) async throws(StateError) {
        for item in items {
            try await write(item, "answer a cancel request") { connection in
                try await connection.query(
                    "DELETE FROM cancel_requests WHERE item = \(item)", logger: self.database.logger)
            }
        }
    }

    public func forget(items: [Int64]) async throws(StateError) {
        try await database.rows("forget items", "DELETE FROM items WHERE id = ANY(\(items))")
    }

    @discardableResult public func forget(workflow: String) async throws(StateError) -> [Int64] {
        let rows = try await database.rows(
            "forget a workflow", "DELETE FROM items WHERE workflow = \(workflow) RETURNING id")
        return try database.decoding("forget a workflow") { try rows.map { try $0.decode(Int64.self) } }
    }
}
