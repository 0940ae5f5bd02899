import Crypto
public import Foundation
import NIOCore
public import PipelineKit
import PostgresNIO
import StageKit

/// The queue of a shared batch: submitted workflows, queued items, the workers' leases on them, and the workers.
///
/// A worker claims the first queued item that no live lease holds, with `FOR UPDATE SKIP LOCKED` (workers never
/// wait for one another) and a lease that its heartbeat extends. Each claim raises the item's lease generation;
/// the worker's writes carry it (``LeaseBook``), so once another worker took an item over, the first one's writes
/// are refused.
public struct BatchQueue: Sendable {
    let database: BatchDatabase

    /// The queue in `database`.
    public init(database: BatchDatabase) {
        self.database = database
    }

    // MARK: Workflows

    /// Stores a workflow document as submitted (the same document and vars are stored once); returns its number.
    public func store(_ workflow: SubmittedWorkflow) async throws(StateError) -> Int64 {
        let vars = JSONValue.object(workflow.vars.mapValues(JSONValue.string)).serialized()
        let key = workflow.key
        let rows = try await database.rows(
            "store the workflow",
            """
            INSERT INTO workflows(key, name, file, document, vars, digest, stages)
            VALUES (\(key), \(workflow.name), \(workflow.file), \(ByteBuffer(bytes: workflow.document)), \(vars), \(workflow.digest),
                \(workflow.stages.joined(separator: "\n")))
            ON CONFLICT (key) DO UPDATE SET submitted_at = now() RETURNING id
            """)
        return try database.decoding("store the workflow") { try rows[0].decode(Int64.self) }
    }

    /// A stored workflow by its ``SubmittedWorkflow/key``.
    public func workflow(_ key: String) async throws(StateError) -> SubmittedWorkflow {
        let rows = try await database.rows(
            "read the workflow", "SELECT name, file, document, vars, digest, stages FROM workflows WHERE key = \(key)")
        guard let row = rows.first else {
            throw StateError(
                code: .corrupt, message: "the database \(database.location) has no workflow \(key)",
                path: database.location)
        }
        return try database.decoding("read the workflow") {
            let (name, file, document, vars, digest, stages) = try row.decode(
                (String, String, Data, String, String, String).self)
            return SubmittedWorkflow(
                name: name, file: file, document: document,
                vars: (try JSONValue(parsing: vars).objectValue ?? [:]).compactMapValues(\.stringValue), digest: digest,
                stages: stages.split(separator: "\n").map(String.init))
        }
    }

    // MARK: Items

    /// Queues items to run with a stored workflow; `digest` is what each is done with once it succeeds. Their
    /// takeover counts start again (``TakeoverLimit``), and a holder whose lease ran out is dropped: queueing is not
    /// a takeover.
    public func enqueue(_ items: [Int64: String], with workflow: Int64) async throws(StateError) {
        guard !items.isEmpty else { return }
        let ids = Array(items.keys)
        let digests = ids.map { items[$0] ?? "" }
        let logger = database.logger
        // One transaction: the items and their units are queued again together, or none is.
        try await database.transaction("queue items") { connection in
            try await connection.query(
                """
                UPDATE items SET queued_with = \(workflow), queued_digest = entry.digest, queued_at = now(),
                    \(unescaped: TakeoverLimit.queuedAgain),
                    lease_owner = CASE WHEN items.lease_expires < now() THEN NULL ELSE items.lease_owner END
                FROM unnest(\(ids), \(digests)) AS entry(id, digest)
                WHERE items.id = entry.id
                """, logger: logger)
            try await connection.query(TakeoverLimit.requeueUnits(of: ids), logger: logger)
        }
    }

    /// Which of `items` are queued now, and which of those a live lease holds (a worker runs them).
    public func queueState(of items: [Int64]) async throws(StateError) -> (queued: Set<Int64>, running: Set<Int64>) {
        guard !items.isEmpty else { return ([], []) }
        let rows = try await database.rows(
            "read the queue",
            """
            SELECT id, lease_expires > now() FROM items WHERE id = ANY(\(items)) AND queued_with IS NOT NULL
            """)
        return try database.decoding("read the queue") {
            var state: (queued: Set<Int64>, running: Set<Int64>) = ([], [])
            for row in rows {
                let (id, leased) = try row.decode((Int64, Bool?).self)
                state.queued.insert(id)
                if leased == true { state.running.insert(id) }
            }
            return state
        }
    }

    /// Lets a claimed item go, still queued, for another worker (this one cannot run its workflow).
    public func release(_ item: Int64, generation: Int64) async throws(StateError) {
        try await database.rows(
            "let an item go",
            """
            UPDATE items SET lease_owner = NULL, lease_expires = NULL
            WHERE id = \(item) AND lease_generation = \(generation)
            """)
    }

    /// Extends the leases a worker holds and records that it is alive; returns the leases it lost (another
    /// worker or a command raised the item's lease generation, or the item was forgotten) and the items it
    /// holds whose cancel was asked for. A heartbeat gives up after `patience`.
    public func heartbeat(_ worker: WorkerRecord, holding held: [Int64: Int64], lease: Duration, patience: Duration)
        async throws(StateError) -> Heartbeat
    {
        let ids = Array(held.keys)
        let generations = ids.map { held[$0] ?? 0 }
        let (lost, cancels, request) = try await database.transaction("renew leases", patience: patience) {
            connection in
            try await connection.query(
                """
                UPDATE items SET lease_expires = now() + make_interval(secs => \(lease.inSeconds)),
                    \(unescaped: TakeoverLimit.renewed)
                FROM unnest(\(ids), \(generations)) AS held(id, generation)
                WHERE items.id = held.id AND items.lease_generation = held.generation
                    AND items.lease_owner = \(worker.id)
                """, logger: database.logger)
            // An item the worker just finished has no owner any more, but its generation is still the worker's.
            var kept: Set<Int64> = []
            for try await row in try await connection.query(
                """
                SELECT items.id FROM unnest(\(ids), \(generations)) AS held(id, generation)
                JOIN items ON items.id = held.id AND items.lease_generation = held.generation
                """, logger: database.logger)
            {
                kept.insert(try row.decode(Int64.self))
            }
            var cancels: Set<Int64> = []
            for try await row in try await connection.query(
                "SELECT item FROM cancel_requests WHERE item = ANY(\(Array(kept)))", logger: database.logger)
            {
                cancels.insert(try row.decode(Int64.self))
            }
            var request: WorkerRequest?
            for try await row in try await connection.query(
                """
                INSERT INTO workers(id, host, pid, lease, done, failed, took_over, takes_requests) VALUES (
                    \(worker.id), \(worker.host), \(worker.pid), \(lease.inSeconds), \(worker.done),
                    \(worker.failed), \(worker.tookOver), true)
                ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), done = EXCLUDED.done, failed = EXCLUDED.failed,
                    took_over = EXCLUDED.took_over, takes_requests = true
                RETURNING request
                """, logger: database.logger)
            {
                request = try row.decode(String?.self).flatMap(WorkerRequest.init(rawValue:))
            }
            return (Set(ids).subtracting(kept), cancels, request)
        }
        // The depth only feeds a metric: a read that fails after the leases were renewed fails no heartbeat.
        return Heartbeat(
            lost: lost, cancelRequested: cancels, queued: try? await queueDepth(patience: patience), request: request)
    }

    /// Items queued that no live lease holds: the tallies' queued items (folded when their rows pile up) less the
    /// running ones, so that no beat scans the queue.
    private func queueDepth(patience: Duration) async throws(StateError) -> Int {
        let queued = try await ItemTallies.read(database, patience: patience).filter(\.queued).reduce(0) {
            $0 + $1.items
        }
        let rows = try await database.rows(
            "count the running items", patience: patience,
            "SELECT count(*) FROM items WHERE \(unescaped: Self.running)")
        let running = try database.decoding("count the running items") {
            try rows.first.map { Int(try $0.decode(Int64.self)) } ?? 0
        }
        // Two reads, two snapshots: an item queued and claimed between them is counted running only.
        return max(0, queued - running)
    }

    /// Items a worker runs: queued, under a lease that has not run out (a handful, found through the lease index).
    static let running = "lease_owner IS NOT NULL AND lease_expires > now() AND queued_with IS NOT NULL"
    /// Items that wait for a worker: queued, under no lease or one that ran out.
    static let waiting = "queued_with IS NOT NULL AND (lease_expires IS NULL OR lease_expires <= now())"

    /// Records that a worker stopped (it holds no lease any more, and runs no stage).
    public func stopped(_ worker: WorkerRecord) async throws(StateError) {
        try await database.rows(
            "record a stopped worker",
            """
            UPDATE workers SET stopped_at = now(), heartbeat_at = now(), done = \(worker.done),
                failed = \(worker.failed), took_over = \(worker.tookOver), progress = NULL WHERE id = \(worker.id)
            """)
    }

    // MARK: Status

    /// The workers, the queue and the items' outcomes, for `pipeline status --db`; with `listingFailed`, the failed
    /// items themselves too (a dashboard and a drain watch need only their count).
    public func status(listingFailed: Bool = true) async throws(StateError) -> BatchStatus {
        let workerRows = try await database.rows(
            "read the workers",
            """
            SELECT w.id AS worker_id, w.host, w.pid, w.started_at, w.heartbeat_at, w.stopped_at, w.done, w.failed,
                (SELECT count(*) FROM items WHERE lease_owner = w.id AND lease_expires > now()) AS holding,
                w.lease, w.request, w.took_over, w.progress::text AS progress
            FROM workers w ORDER BY w.started_at
            """)
        let clockRows = try await database.rows("read the database's clock", "SELECT now()")
        let tallies = try await ItemTallies.read(database)
        let runningRows = try await database.rows(
            "read the queue",
            """
            SELECT workflow, count(*) FROM items WHERE \(unescaped: Self.running) GROUP BY 1
            """)
        let failedRows =
            listingFailed
            ? try await database.rows(
                "read the failed items",
                """
                SELECT \(unescaped: PostgresStore.itemColumns) FROM items WHERE status = 'failed' AND queued_with IS NULL
                ORDER BY id
                """) : nil
        let splits = try await SegmentQueue(database: database).splits()
        return try database.decoding("read the status") {
            var status = BatchStatus()
            status.workers = try workerRows.map(BatchStatus.Worker.init(row:))
            status.readAt = try clockRows.first?.decode(Date.self) ?? Date()
            for tally in tallies {
                var counts = status.workflows[tally.workflow] ?? BatchStatus.Counts()
                if tally.queued {
                    counts.queued += tally.items
                } else {
                    counts.byStatus[tally.status, default: 0] += tally.items
                }
                status.workflows[tally.workflow] = counts
            }
            // Two reads, two snapshots: an item queued and claimed between them is running but not yet counted
            // as queued, so queued never goes below zero.
            for row in runningRows {
                let (workflow, running) = try row.decode((String, Int64).self)
                var counts = status.workflows[workflow] ?? BatchStatus.Counts()
                counts.running += Int(running)
                counts.queued = max(0, counts.queued - Int(running))
                status.workflows[workflow] = counts
            }
            status.failed = try failedRows.map { try NamedColumns.rows(of: $0).map(PostgresStore.item) } ?? []
            status.splits = splits
            return status
        }
    }

}

/// A workflow document as submitted, stored with the batch so that every worker runs the same version.
public struct SubmittedWorkflow: Sendable, Hashable {
    /// The workflow's name.
    public var name: String
    /// Where it was submitted from (its plugins' relative paths are relative to that folder).
    public var file: String
    /// The file's bytes.
    public var document: Data
    /// The `--var` overrides it was submitted with.
    public var vars: [String: String]
    /// Its ``PipelineKit/Workflow/digest``.
    public var digest: String
    /// Its stage ids, in order.
    public var stages: [String]

    /// Creates a submitted workflow.
    public init(
        name: String, file: String, document: Data, vars: [String: String], digest: String, stages: [String]
    ) {
        self.name = name
        self.file = file
        self.document = document
        self.vars = vars
        self.digest = digest
        self.stages = stages
    }

    /// What identifies this version: the document and the overrides.
    var key: String {
        var hash = SHA256()
        hash.update(data: Data(name.utf8))
        hash.update(data: [0])
        hash.update(data: document)
        for (name, value) in vars.sorted(by: { $0.key < $1.key }) {
            hash.update(data: Data("\0\(name)=\(value)".utf8))
        }
        return HexDigest.text(hash.finalize())
    }
}

/// A worker as the database lists it.
public struct WorkerRecord: Sendable, Hashable {
    /// Unique per process: host, pid and a random suffix.
    public var id: String
    /// The machine.
    public var host: String
    /// The process.
    public var pid: Int32
    /// Items it finished.
    public var done: Int64 = 0
    /// Items that failed on it.
    public var failed: Int64 = 0
    /// Items it took over from a worker whose lease ran out.
    public var tookOver: Int64 = 0

    /// A worker with no items done yet.
    public init(id: String, host: String, pid: Int32) {
        self.id = id
        self.host = host
        self.pid = pid
    }

    /// This process as a worker.
    public static func current() -> WorkerRecord {
        let host = ProcessInfo.processInfo.hostName
        let pid = ProcessInfo.processInfo.processIdentifier
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        return WorkerRecord(id: "\(host):\(pid):\(suffix)", host: host, pid: pid)
    }
}

/// What a heartbeat learnt.
public struct Heartbeat: Sendable {
    /// Items whose lease another worker took over: this worker must stop them and write nothing more.
    public var lost: Set<Int64>
    /// Items held whose cancel was asked for.
    public var cancelRequested: Set<Int64>
    /// Items queued that no live lease holds; nil when they could not be counted.
    public var queued: Int?
    /// What the worker was asked to do (``WorkerRequest``).
    public var request: WorkerRequest?
}

/// The state of a shared batch.
public struct BatchStatus: Sendable {
    /// A worker, live or stopped.
    public struct Worker: Sendable {
        public var id: String
        public var host: String
        public var pid: Int
        public var startedAt: Date
        public var heartbeatAt: Date
        public var stoppedAt: Date?
        public var done: Int64
        public var failed: Int64
        /// Items it holds a live lease on.
        public var holding: Int
        /// Its lease in seconds: a worker silent for longer has died or lost the database.
        public var lease: Double
        /// What it was asked to do (``WorkerRequest``).
        public var request: WorkerRequest?
        /// Items it took over from a worker whose lease ran out.
        public var tookOver: Int64
        /// The stages it runs now, as it last published them (at most once a second).
        public var running: [WorkerStage]
    }

    /// A workflow's items: queued, running (a live lease holds them) and the others by status.
    public struct Counts: Sendable {
        public var queued = 0
        public var running = 0
        public var byStatus: [String: Int] = [:]
    }

    public var workers: [Worker] = []
    /// The database's clock when the workers were read: their liveness is judged by it, as ``BatchQueue/ask(_:to:)``
    /// and the pruning judge it, not by the reader's clock.
    public var readAt = Date()
    /// By workflow name.
    public var workflows: [String: Counts] = [:]
    /// Items that failed (and are not queued again), with their reasons, when the status was read listing them.
    public var failed: [LedgerItem] = []
    /// Items whose segmented encode the workers share, with their units' progress.
    public var splits: [SegmentSplit] = []
}
