public import Foundation

/// Where a worker stands, by the one rule `pipeline status --db` and the dashboard share.
public enum WorkerState: String, Sendable {
    /// Renewing its leases, asked nothing.
    case live
    /// Live, asked to drain: it finishes what it holds and claims nothing new.
    case draining
    /// Live, asked to stop: it is cancelling its stages and letting its items go.
    case stopping
    /// No heartbeat for longer than its lease, without it saying it stopped: killed, or cut off (its items are
    /// other workers' to take over).
    case silent
    /// It said it stopped.
    case stopped

    /// The word people are shown: a silent worker is stopped since its lease ran out.
    public var word: String { self == .silent ? "stopped" : rawValue }

    /// Whether it still works (and reads its requests).
    public var isLive: Bool { self == .live || self == .draining || self == .stopping }

    /// The `state` the JSON of `/api/status` and `status --db --json` gives: `live`, `silent` or `stopped`, as
    /// before requests (a draining or stopping worker is live); what it was asked is the JSON's `request`.
    public var reported: String { isLive ? WorkerState.live.rawValue : rawValue }
}

extension BatchQueue {
    /// The SQL condition of a live `workers` row, by the database's clock: it did not say it stopped, and its last
    /// heartbeat is within its lease. ``BatchStatus/Worker/state(at:)`` is the same rule, given the database's now.
    static let workerLive = "stopped_at IS NULL AND heartbeat_at >= now() - make_interval(secs => lease)"
}

extension BatchStatus.Worker {
    /// Its state as of `now`: stopped when it said so, silent when its lease ran out since its last heartbeat, else
    /// live, draining or stopping by what it was asked.
    public func state(at now: Date = Date()) -> WorkerState {
        if stoppedAt != nil { return .stopped }
        if now.timeIntervalSince(heartbeatAt) > lease { return .silent }
        return request?.state ?? .live
    }

    /// When it stopped: when it said so, or when its lease ran out; nil while it is live.
    public func stoppedSince(at now: Date = Date()) -> Date? {
        state(at: now).isLive ? nil : stoppedAt ?? heartbeatAt.addingTimeInterval(lease)
    }
}
