import Foundation
import Logging
public import PipelineKit
import PostgresNIO
public import StageKit

/// The ledger in PostgreSQL: the same ``StateStore`` as ``SQLiteLedger``, shared by every worker of a batch.
///
/// A worker's store is fenced by its ``LeaseBook``: every write for an item first locks the item's row and
/// checks that the lease generation the worker claimed it with is still the current one. A worker whose lease
/// was taken over (it stalled past the lease) gets ``StateError/Code-swift.struct/leaseLost`` for every write and
/// cannot overwrite the checkpoints of the worker that took the item over. Commands that are not workers
/// (`submit`, `status`, `cancel`, `forget`) use a store without a lease book.
public final class PostgresStore: StateStore {
    let database: BatchDatabase
    /// The leases that fence this store's writes; nil for a store that is not a worker's.
    public let leases: LeaseBook?

    /// A store on `database`, fenced by `leases` when it is a worker's.
    public init(database: BatchDatabase, leases: LeaseBook? = nil) {
        self.database = database
        self.leases = leases
    }

    public var location: String { database.location }

    // MARK: Reading

    /// The columns ``item(_:)`` reads, in order.
    static let itemColumns = """
        id, version, fingerprint, path, relative_path, size, modified, meta, status, digest, error, error_kind,
        updated_at
        """

    static func item(_ row: PostgresRow) throws -> LedgerItem {
        let columns = Columns(row)
        let message: String? = try columns[10]
        let kind: String? = try columns[11]
        let meta: String? = try columns[7]
        let status: String = try columns[8]
        return LedgerItem(
            id: try columns[0], version: Int(try columns[1] as Int32), fingerprint: try columns[2],
            input: InputItem(
                path: try columns[3], relativePath: try columns[4], size: try columns[5], modified: try columns[6],
                meta: meta.flatMap { try? JSONValue(parsing: $0).objectValue } ?? [:]),
            status: ItemStatus(rawValue: status) ?? .pending, digest: try columns[9],
            error: message.map { FailureReport(message: $0, kind: kind.map { ErrorKind(rawValue: $0) } ?? .failed) },
            updatedAt: try columns[12])
    }

    private func items(_ doing: String, _ query: PostgresQuery) async throws(StateError) -> [LedgerItem] {
        let rows = try await database.rows(doing, query)
        return try database.decoding(doing) { try rows.map(Self.item) }
    }

    public func snapshot(workflow: String) async throws(StateError) -> LedgerSnapshot {
        LedgerSnapshot(
            items: try await items(
                "read the items",
                "SELECT \(unescaped: Self.itemColumns) FROM items WHERE workflow = \(workflow) ORDER BY id"))
    }

    public func items(workflow: String, pathsFrom first: String, through last: String) async throws(StateError)
        -> [LedgerItem]
    {
        try await items(
            "read the items",
            """
            SELECT \(unescaped: Self.itemColumns) FROM items
            WHERE workflow = \(workflow) AND path BETWEEN \(first) AND \(last)
            """)
    }

    public func items(workflow: String, fingerprints: [String]) async throws(StateError) -> [LedgerItem] {
        guard !fingerprints.isEmpty else { return [] }
        return try await items(
            "read the items",
            """
            SELECT \(unescaped: Self.itemColumns) FROM items
            WHERE workflow = \(workflow) AND fingerprint = ANY(\(fingerprints))
            """)
    }

    public func cachedFingerprints(pathsFrom first: String, through last: String) async throws(StateError)
        -> [String: FingerprintCacheEntry]
    {
        let rows = try await database.rows(
            "read the fingerprint cache",
            """
            SELECT path, size, modified_ns, inode, device, method, fingerprint, media FROM files
            WHERE path BETWEEN \(first) AND \(last)
            """)
        return try database.decoding("read the fingerprint cache") {
            var entries: [String: FingerprintCacheEntry] = [:]
            for row in rows {
                let columns = Columns(row)
                guard let method = FingerprintMethod(rawValue: try columns[5]) else { continue }
                let stamp = FileStamp(
                    path: try columns[0], size: try columns[1], modifiedNanoseconds: try columns[2],
                    inode: try columns[3], device: try columns[4])
                let media = (try columns[7] as String?).flatMap { text in
                    try? JSONDecoder().decode(MediaProbeResult.self, from: Data(text.utf8))
                }
                entries[stamp.path] = FingerprintCacheEntry(
                    stamp: stamp, method: method, fingerprint: try columns[6], media: media)
            }
            return entries
        }
    }

    public func checkpoints(workflow: String, items: Set<Int64>?) async throws(StateError) -> [Int64: [String:
        StageRecord]]
    {
        try await records(workflow: workflow, items: items, condition: "stages.version = items.version")
    }

    public func previousOutputs(workflow: String, items: Set<Int64>?) async throws(StateError)
        -> [Int64: [String: JSONValue]]
    {
        try await records(
            workflow: workflow, items: items,
            condition: "stages.version = items.version - 1 AND stages.status = 'succeeded'"
        ).mapValues { $0.mapValues { $0.outputs ?? .null } }
    }

    /// The stage records of a workflow's items (nil: all of them) whose row meets `condition`.
    private func records(workflow: String, items: Set<Int64>?, condition: String) async throws(StateError)
        -> [Int64: [String: StageRecord]]
    {
        let selection: PostgresQuery =
            if let items {
                """
                SELECT stages.item, stages.stage, stages.record FROM stages JOIN items ON items.id = stages.item
                WHERE items.workflow = \(workflow) AND stages.item = ANY(\(Array(items))) AND \(unescaped: condition)
                """
            } else {
                """
                SELECT stages.item, stages.stage, stages.record FROM stages JOIN items ON items.id = stages.item
                WHERE items.workflow = \(workflow) AND \(unescaped: condition)
                """
            }
        let rows = try await database.rows("read the checkpoints", selection)
        return try database.decoding("read the checkpoints") {
            var found: [Int64: [String: StageRecord]] = [:]
            for row in rows {
                let columns = Columns(row)
                found[try columns[0] as Int64, default: [:]][try columns[1] as String] = try StageRecord(
                    decoding:
                        try columns[2])
            }
            return found
        }
    }

    public func cancelRequests(workflow: String) async throws(StateError) -> Set<Int64> {
        let rows = try await database.rows(
            "read the cancel requests",
            """
            SELECT cancel_requests.item FROM cancel_requests JOIN items ON items.id = cancel_requests.item
            WHERE items.workflow = \(workflow)
            """)
        return try database.decoding("read the cancel requests") { Set(try rows.map { try Columns($0)[0] as Int64 }) }
    }

    public func workflows() async throws(StateError) -> [RunRecord] {
        let rows = try await database.rows(
            "read the runs",
            """
            SELECT workflow, file, stages FROM runs WHERE id IN (SELECT max(id) FROM runs GROUP BY workflow)
            ORDER BY workflow
            """)
        return try database.decoding("read the runs") {
            try rows.map { row in
                let columns = Columns(row)
                return RunRecord(
                    workflow: try columns[0], file: try columns[1],
                    stages: (try columns[2] as String).split(separator: "\n").map(String.init))
            }
        }
    }

    // MARK: Writing

    public func cacheFingerprints(_ entries: [FingerprintCacheEntry]) async throws(StateError) {
        guard !entries.isEmpty else { return }
        for start in stride(from: 0, to: entries.count, by: 1_000) {
            let chunk = entries[start..<min(start + 1_000, entries.count)]
            let media = chunk.map { entry in
                entry.media.flatMap { try? JSONEncoder().encode($0) }.map { String(decoding: $0, as: UTF8.self) }
            }
            try await database.rows(
                "save fingerprints",
                """
                INSERT INTO files
                SELECT path, size, modified_ns, inode, device, method, fingerprint, NULLIF(media, '') FROM unnest(\(chunk.map(\.stamp.path)), \(chunk.map(\.stamp.size)),
                    \(chunk.map(\.stamp.modifiedNanoseconds)), \(chunk.map(\.stamp.inode)),
                    \(chunk.map(\.stamp.device)), \(chunk.map(\.method.rawValue)), \(chunk.map(\.fingerprint)),
                    \(media.map { $0 ?? "" }))
                    AS entry(path, size, modified_ns, inode, device, method, fingerprint, media)
                ON CONFLICT (path) DO UPDATE SET size = EXCLUDED.size, modified_ns = EXCLUDED.modified_ns,
                    inode = EXCLUDED.inode, device = EXCLUDED.device, method = EXCLUDED.method,
                    fingerprint = EXCLUDED.fingerprint, media = EXCLUDED.media
                """)
        }
    }

    public func beginRun(_ run: RunRecord, caching entries: [FingerprintCacheEntry], sightings: [ItemSighting])
        async throws(StateError) -> Int64
    {
        let id = try await beginRun(run)
        try await cacheFingerprints(entries)
        try await recordPaths(sightings)
        return id
    }

    /// Records a run's start alone (`pipeline submit` records where items are once it has queued them).
    public func beginRun(_ run: RunRecord) async throws(StateError) -> Int64 {
        let rows = try await database.rows(
            "record the run",
            """
            INSERT INTO runs(workflow, file, stages) VALUES (\(run.workflow), \(run.file),
                \(run.stages.joined(separator: "\n"))) RETURNING id
            """)
        return try database.decoding("record the run") { try rows.first.map { try Columns($0)[0] as Int64 } ?? 0 }
    }

    public func finishRun(_ run: Int64, summary: RunSummary) async throws(StateError) {
        let totals = JSONValue.object(summary.fields).serialized()
        try await database.rows(
            "record the run", "UPDATE runs SET finished_at = now(), summary = \(totals) WHERE id = \(run)")
    }

    public func admit(_ admission: ItemAdmission, workflow: String) async throws(StateError) -> AdmittedItem {
        let input = admission.input
        let meta = Self.meta(input)
        let fencesOut = leases == nil
        return try await write(admission.item, "admit an item") { connection in
            var ref: ItemVersion?
            if let id = admission.item {
                let rows = try await connection.query(
                    """
                    UPDATE items SET version = version + \(admission.newVersion ? 1 : 0),
                        fingerprint = \(admission.fingerprint), path = \(input.path),
                        relative_path = \(input.relativePath), size = \(input.size), modified = \(input.modified),
                        meta = \(meta), status = 'pending',
                        digest = CASE WHEN \(admission.newVersion) THEN NULL ELSE digest END, updated_at = now(),
                        lease_generation = lease_generation + \(fencesOut ? 1 : 0)
                    WHERE id = \(id) RETURNING version
                    """, logger: self.database.logger)
                for try await row in rows { ref = ItemVersion(item: id, version: Int(try Columns(row)[0] as Int32)) }
            }
            if ref == nil {
                // Keyed by content: a second submit of the same file finds the item it made.
                let rows = try await connection.query(
                    """
                    INSERT INTO items(workflow, version, fingerprint, path, relative_path, size, modified, meta, status)
                    VALUES (\(workflow), 1, \(admission.fingerprint), \(input.path), \(input.relativePath),
                        \(input.size), \(input.modified), \(meta), 'pending')
                    ON CONFLICT (workflow, fingerprint) DO UPDATE SET path = EXCLUDED.path,
                        relative_path = EXCLUDED.relative_path, status = 'pending', updated_at = now()
                    RETURNING id, version
                    """, logger: self.database.logger)
                for try await row in rows {
                    let columns = Columns(row)
                    ref = ItemVersion(item: try columns[0], version: Int(try columns[1] as Int32))
                }
            }
            guard let ref else { throw StateError(code: .corrupt, message: "an admitted item has no row", path: "") }
            let (item, version) = (ref.item, Int32(ref.version))
            try await connection.query(
                """
                INSERT INTO versions(item, version, fingerprint, path)
                VALUES (\(item), \(version), \(admission.fingerprint), \(input.path)) ON CONFLICT DO NOTHING
                """, logger: self.database.logger)
            try await connection.query(
                "INSERT INTO paths VALUES (\(item), \(input.path)) ON CONFLICT DO NOTHING",
                logger: self.database.logger)
            // As in the SQLite ledger: only the previous version's outputs stay reachable, and a stage the
            // previous version did not finish keeps the outputs of the version before, which did.
            let (older, previous) = (version - 2, version - 1)
            try await connection.query(
                """
                DELETE FROM stages WHERE item = \(item) AND version = \(previous) AND status != 'succeeded'
                    AND stage IN (
                        SELECT stage FROM stages WHERE item = \(item) AND version = \(older) AND status = 'succeeded')
                """, logger: self.database.logger)
            try await connection.query(
                """
                UPDATE stages SET version = \(previous) WHERE item = \(item) AND version = \(older)
                    AND status = 'succeeded'
                    AND stage NOT IN (SELECT stage FROM stages WHERE item = \(item) AND version = \(previous))
                """, logger: self.database.logger)
            try await connection.query(
                "DELETE FROM stages WHERE item = \(item) AND version < \(previous)", logger: self.database.logger)
            var stages: [String: StageRecord] = [:]
            var previousOutputs: [String: JSONValue] = [:]
            let rows = try await connection.query(
                "SELECT version, stage, status, record FROM stages WHERE item = \(item) AND version >= \(previous)",
                logger: self.database.logger)
            for try await row in rows {
                let columns = Columns(row)
                let record = try StageRecord(decoding: try columns[3])
                if try columns[0] as Int32 == version {
                    stages[try columns[1]] = record
                } else if try columns[2] as String == StageRecord.Status.succeeded.rawValue {
                    previousOutputs[try columns[1]] = record.outputs ?? .null
                }
            }
            return AdmittedItem(ref: ref, stages: stages, previousOutputs: previousOutputs)
        }
    }

    public func recordPaths(_ sightings: [ItemSighting]) async throws(StateError) {
        for sighting in sightings {
            let input = sighting.input
            let meta = Self.meta(input)
            try await write(nil, "record where items are") { connection in
                try await connection.query(
                    """
                    UPDATE items SET path = \(input.path), relative_path = \(input.relativePath),
                        size = \(input.size), modified = \(input.modified), meta = \(meta)
                    WHERE id = \(sighting.item)
                    """, logger: self.database.logger)
                try await connection.query(
                    "INSERT INTO paths VALUES (\(sighting.item), \(input.path)) ON CONFLICT DO NOTHING",
                    logger: self.database.logger)
            }
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

    /// Records how an item ended. On a worker it also leaves the queue: a success or a failure is dequeued (a
    /// later `submit` queues a failed item again), an interrupted item stays queued for the next worker; either
    /// way the lease is let go.
    public func finish(_ item: ItemVersion, result: ItemResult, digest: String?) async throws(StateError) {
        let status: ItemStatus? =
            switch result.outcome {
            case .done: .succeeded
            case .failed: .failed
            case .interrupted: .interrupted
            case .reused, .skipped: nil
            }
        let error = status == .failed ? result.reason : nil
        let kind = status == .failed ? result.errorKind?.description : nil
        let dequeue = status == .succeeded || status == .failed
        try await write(item.item, "record how an item ended") { connection in
            if let status {
                try await connection.query(
                    """
                    UPDATE items SET status = \(status.rawValue), digest = \(digest), error = \(error),
                        error_kind = \(kind), updated_at = now()
                    WHERE id = \(item.item) AND version = \(Int32(item.version))
                    """, logger: self.database.logger)
            }
            try await connection.query(
                """
                UPDATE items SET lease_owner = NULL, lease_expires = NULL,
                    queued_with = CASE WHEN \(dequeue) THEN NULL ELSE queued_with END
                WHERE id = \(item.item) AND version = \(Int32(item.version)) AND \(self.leases != nil)
                """, logger: self.database.logger)
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
                if status == .cancelled {
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

    public func forget(workflow: String) async throws(StateError) {
        try await database.rows("forget a workflow", "DELETE FROM items WHERE workflow = \(workflow)")
    }

    // MARK: Plumbing

    /// Runs `body` in a transaction; on a worker, the item's row is locked first and the write refused unless
    /// the worker's lease on it is still the current one.
    @discardableResult
    private func write<T: Sendable>(
        _ item: Int64?, _ doing: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(StateError) -> T {
        guard let leases else { return try await database.transaction(doing, body) }
        guard let item, let generation = leases.generation(of: item) else {
            throw StateError(
                code: .leaseLost, message: "cannot \(doing): this worker holds no lease on the item",
                path: location)
        }
        let logger = database.logger
        let location = self.location
        do {
            return try await fenced(item, generation: generation, doing, logger: logger, location: location, body)
        } catch  where error.code == .leaseLost {
            leases.lose(item)
            throw error
        }
    }

    private func fenced<T: Sendable>(
        _ item: Int64, generation: Int64, _ doing: String, logger: Logger, location: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(StateError) -> T {
        try await database.transaction(doing) { connection in
            var current: Int64?
            for try await row in try await connection.query(
                "SELECT lease_generation FROM items WHERE id = \(item) FOR UPDATE", logger: logger)
            {
                current = try Columns(row)[0]
            }
            guard current == generation else {
                throw StateError(
                    code: .leaseLost,
                    message:
                        "cannot \(doing) for item \(item): its lease was taken over by another worker (lease \(generation), now \(current.map(String.init) ?? "gone"))",
                    path: location)
            }
            return try await body(connection)
        }
    }

    /// An input's metadata as stored (nil when it has none).
    private static func meta(_ input: InputItem) -> String? {
        input.meta.isEmpty ? nil : JSONValue.object(input.meta).serialized()
    }
}
