public import PipelineKit
public import SharedBatch

/// Where a dashboard reads: a state folder's ledger, or a shared batch's database with its queue and workers.
public enum DashboardSource: Sendable {
    /// A state folder's ledger. `openLedger` opens it for reading (nil while no run has made it);
    /// `requestCancel` leaves a cancel request for the process that holds the folder and tells it, and is false
    /// when no process holds it; `requestRetry` leaves retry requests for the failed items selected and tells a
    /// `pipeline watch` holding the folder; `progress` reads the stages the run holding the folder has running
    /// (none while no run holds it).
    case stateFolder(
        location: String, openLedger: @Sendable () throws -> SQLiteLedger?,
        requestCancel: @Sendable ([Int64]) async throws -> Bool,
        requestRetry: @Sendable (RetrySelection) async throws -> StateFolderRetry,
        progress: @Sendable () -> [String: [RunningStage]] = { [:] })
    /// A shared batch's database.
    case sharedBatch(BatchDatabase)

    /// Where the dashboard reads, for the page's title.
    var location: String {
        switch self {
        case .stateFolder(let location, _, _, _, _): location
        case .sharedBatch(let database): database.location
        }
    }

    /// The stages running now with their progress, rate and ETA, by workflow: a state folder's from the progress file
    /// of the run holding it.
    func runningStages() -> [String: [RunningStage]] {
        switch self {
        case .stateFolder(_, _, _, _, let progress): progress()
        case .sharedBatch: [:]
        }
    }

    /// Runs `body` with the ledger (nil when there is none yet), and for a shared batch its queue.
    func reading<T>(_ body: (_ ledger: (any LedgerBrowsing)?, _ queue: BatchQueue?) async throws -> T) async throws
        -> T
    {
        switch self {
        case .stateFolder(_, let openLedger, _, _, _):
            // Opened per request: a ledger opened while idle is read as immutable and would not see a run
            // that starts later.
            let ledger = try openLedger()
            defer { try? ledger?.close() }
            return try await body(ledger, nil)
        case .sharedBatch(let database):
            return try await body(PostgresStore(database: database), BatchQueue(database: database))
        }
    }
}

/// The failed items of a state folder a dashboard asks to run again.
public enum RetrySelection: Sendable {
    /// These items, those of them that are failed.
    case items([Int64])
    /// Every failed item a list's filters select.
    case failed(matching: ItemQuery)

    /// Leaves a retry request in `ledger` (a writer's) for each failed item selected; returns them.
    public func request(in ledger: SQLiteLedger) async throws(StateError) -> Set<Int64> {
        switch self {
        case .items(let ids): try await ledger.requestRetry(of: ids)
        case .failed(let query): try await ledger.requestRetry(matching: query)
        }
    }
}

/// What a state folder does with the failed items whose retry a dashboard asked for: a `pipeline watch` holding the
/// folder runs those of its workflow at once; otherwise the next `pipeline run` of their workflow does (a dashboard
/// starts no run). An item whose file is gone is not asked for: no run takes it up.
public struct StateFolderRetry: Sendable {
    /// The items asked for: those that were failed and whose file is there.
    public var items: Set<Int64>
    /// Those of `items` a `pipeline watch` holding the folder runs now.
    public var runningNow: Set<Int64>
    /// The failed items selected whose file is gone.
    public var gone: Set<Int64>

    /// The answer to a retry.
    public init(items: Set<Int64>, runningNow: Set<Int64> = [], gone: Set<Int64> = []) {
        self.items = items
        self.runningNow = runningNow.intersection(items)
        self.gone = gone
    }

    /// What happens to them, in plain words.
    var outcome: String {
        let queued = items.count - runningNow.count
        var parts: [String] = []
        if !runningNow.isEmpty {
            parts.append(queued == 0 ? "running again now" : "\(runningNow.count) running again now")
        }
        if queued > 0 {
            let next = "queued for the next pipeline run"
            parts.append(runningNow.isEmpty ? next : "\(queued) \(next)")
        }
        if !gone.isEmpty {
            parts.append(
                gone.count == 1 ? "1 not retried: its file is gone" : "\(gone.count) not retried: their files are gone")
        }
        return parts.isEmpty ? "no failed item to retry" : parts.joined(separator: "; ")
    }
}
