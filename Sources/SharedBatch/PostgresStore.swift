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

    /// Every commit of the shared database is synced before it returns, so none is ever held.
    public var holdsDeferredCommits: Bool { false }

    // MARK: Reading

    /// The columns ``item(_:)`` reads, by name: a query may select more, in any order.
    static let itemColumns = """
        id, version, fingerprint, path, relative_path, size, modified, meta, status, digest, error, error_kind,
        updated_at
        """

    /// The item of a row that has the ``itemColumns``, among others its caller reads.
    static func item(_ columns: NamedColumns) throws -> LedgerItem {
        LedgerItem(
            storedID: try columns["id"], version: Int(try columns["version"] as Int32),
            fingerprint: try columns["fingerprint"], path: try columns["path"],
            relativePath: try columns["relative_path"], size: try columns["size"], modified: try columns["modified"],
            meta: try columns["meta"], status: try columns["status"], digest: try columns["digest"],
            error: try columns["error"], errorKind: try columns["error_kind"], updatedAt: try columns["updated_at"])
    }

    private func items(_ doing: String, _ query: PostgresQuery) async throws(StateError) -> [LedgerItem] {
        let rows = try await database.rows(doing, query)
        return try database.decoding(doing) { try NamedColumns.rows(of: rows).map(Self.item) }
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
                let (path, size, modified, inode, device, method, fingerprint, media) = try row.decode(
                    (String, Int64, Int64, Int64, Int64, String, String, String?).self)
                guard
                    let entry = FingerprintCacheEntry(
                        storedPath: path, size: size, modifiedNanoseconds: modified, inode: inode, device: device,
                        method: method, fingerprint: fingerprint, media: media)
                else { continue }
                entries[entry.stamp.path] = entry
            }
            return entries
        }
    }

    public func checkpoints(workflow: String, items: Set<Int64>?) async throws(StateError) -> [Int64: [String:
        StageRecord]]
    {
        try await records(workflow: workflow, items: items, condition: CheckpointCompaction.currentCheckpoints)
    }

    public func previousOutputs(workflow: String, items: Set<Int64>?) async throws(StateError)
        -> [Int64: [String: JSONValue]]
    {
        try await records(
            workflow: workflow, items: items,
            condition: CheckpointCompaction.previousOutputs
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
                let (item, stage, record) = try row.decode((Int64, String, String).self)
                found[item, default: [:]][stage] = try StageRecord(decoding: record)
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
        return try database.decoding("read the cancel requests") { Set(try rows.map { try $0.decode(Int64.self) }) }
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
                let (workflow, file, stages) = try row.decode((String, String, String).self)
                return RunRecord(workflow: workflow, file: file, stages: stages.split(separator: "\n").map(String.init))
            }
        }
    }

    // MARK: Plumbing

    /// Runs `body` in a transaction; on a worker, the item's row is locked first and the write refused unless
    /// the worker's lease on it is still the current one.
    @discardableResult
    func write<T: Sendable>(
        _ item: Int64?, _ doing: String, patience: Duration? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(StateError) -> T {
        guard let leases else { return try await database.transaction(doing, patience: patience, body) }
        guard let item, let generation = leases.generation(of: item) else {
            throw StateError(
                code: .leaseLost, message: "cannot \(doing): this worker holds no lease on the item",
                path: location)
        }
        let logger = database.logger
        let location = self.location
        do {
            return try await fenced(
                item, generation: generation, doing, patience: patience, logger: logger, location: location, body)
        } catch  where error.code == .leaseLost {
            leases.lose(item)
            throw error
        }
    }

    private func fenced<T: Sendable>(
        _ item: Int64, generation: Int64, _ doing: String, patience: Duration?, logger: Logger, location: String,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(StateError) -> T {
        try await database.transaction(doing, patience: patience) { connection in
            var current: Int64?
            for try await row in try await connection.query(
                "SELECT lease_generation FROM items WHERE id = \(item) FOR UPDATE", logger: logger)
            {
                current = try row.decode(Int64.self)
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
}
