public import PipelineKit
import PostgresNIO
import StageKit

/// What a worker is asked to do from outside (the dashboard, `pipeline worker --drain`/`--stop`): kept on its
/// `workers` row, read with its lease renewal and its progress, at most every ``WorkerControl/lookInterval``.
public enum WorkerRequest: String, Sendable, CaseIterable {
    /// Finish the items it holds, claim nothing new, then exit 0.
    case drain
    /// Stop now: its running stages are cancelled as SIGTERM cancels them, and its items go back to the queue at
    /// once (their leases let go, so no takeover is counted against them).
    case stop

    /// The state a live worker asked this is shown in.
    public var state: WorkerState {
        switch self {
        case .drain: .draining
        case .stop: .stopping
        }
    }
}

/// The columns a worker is controlled and followed by: the request, the items it took over (``TakeoverLimit``'s
/// takeovers, as its card says), and its running stages' progress.
enum WorkerControl {
    /// How often a worker looks for a request when it has no progress to publish: "within a few seconds", at a
    /// primary key's read per look.
    static let lookInterval: Duration = .seconds(2)

    /// How often a worker publishes its running stages' progress at most.
    static let publishInterval: Duration = .seconds(1)

    /// The columns, added once: checked first, as the other additions are. `takes_requests` is set by the
    /// heartbeat of a pipeline that reads `request`; a worker of an older pipeline leaves it false, and is refused.
    static let addition = """
        DO $$ BEGIN
            IF (SELECT count(*) FROM pg_attribute WHERE attrelid = 'workers'::regclass AND NOT attisdropped
                AND attname IN ('request', 'took_over', 'progress', 'takes_requests')) < 4 THEN
                ALTER TABLE workers ADD COLUMN IF NOT EXISTS request text,
                    ADD COLUMN IF NOT EXISTS took_over bigint NOT NULL DEFAULT 0,
                    ADD COLUMN IF NOT EXISTS progress jsonb,
                    ADD COLUMN IF NOT EXISTS takes_requests boolean NOT NULL DEFAULT false;
            END IF;
        END $$
        """
}

/// Why asking a worker failed.
public enum WorkerRequestRefusal: Error, Sendable, Equatable {
    /// No worker of that id in the batch.
    case unknown
    /// It stopped, or its lease ran out (killed or cut off): nothing would see the request.
    case notLive
    /// It runs a pipeline that does not read requests (one from before them): it would never act on one.
    case takesNoRequests
}

extension BatchQueue {
    /// Asks the live worker `worker` to drain or stop; a stop stands over an earlier drain, not the other way
    /// round. Returns why it was refused (no such worker, one that is not live, or one whose pipeline takes no
    /// requests), nil when it was left for the worker.
    public func ask(_ worker: String, to request: WorkerRequest) async throws(StateError) -> WorkerRequestRefusal? {
        let rows = try await database.rows(
            "ask a worker to \(request.rawValue)",
            """
            UPDATE workers SET request = CASE WHEN request = 'stop' THEN request ELSE \(request.rawValue) END
            WHERE id = \(worker) AND \(unescaped: Self.workerLive) AND takes_requests
            RETURNING id
            """)
        if !rows.isEmpty { return nil }
        let known = try await database.rows(
            "find a worker",
            """
            SELECT takes_requests OR NOT (\(unescaped: Self.workerLive)) FROM workers WHERE id = \(worker)
            """)
        return try database.decoding("find a worker") {
            guard let row = known.first else { return .unknown }
            return try row.decode(Bool.self) ? .notLive : .takesNoRequests
        }
    }

    /// What `worker` was asked to do, nil when nothing (or when it is not listed: pruned while cut off).
    func request(of worker: String) async throws(StateError) -> WorkerRequest? {
        let rows = try await database.rows(
            "read a worker's request", "SELECT request FROM workers WHERE id = \(worker)")
        return try database.decoding("read a worker's request") {
            try rows.first.flatMap { try $0.decode(String?.self) }.flatMap(WorkerRequest.init(rawValue:))
        }
    }

    /// Publishes `worker`'s running stages (a JSON array, nil for none) and returns what it was asked to do.
    func publish(progress: String?, of worker: String) async throws(StateError) -> WorkerRequest? {
        let rows = try await database.rows(
            "publish a worker's progress",
            "UPDATE workers SET progress = \(progress)::jsonb WHERE id = \(worker) RETURNING request")
        return try database.decoding("publish a worker's progress") {
            try rows.first.flatMap { try $0.decode(String?.self) }.flatMap(WorkerRequest.init(rawValue:))
        }
    }

    /// How many counted takeovers item `item` has had since its last progress, nil when there is no such item.
    public func takeovers(of item: Int64) async throws(StateError) -> Int? {
        let rows = try await database.rows("read an item's takeovers", "SELECT takeovers FROM items WHERE id = \(item)")
        return try database.decoding("read an item's takeovers") {
            try rows.first.map { Int(try $0.decode(Int32.self)) }
        }
    }
}
