public import StageKit

/// The totals of a run.
public struct RunSummary: Sendable, Hashable {
    /// Files found for the run (those the selection passed over included).
    public var items: Int
    /// Items whose stages ran (or were reused) and all succeeded.
    public var succeeded = 0
    /// Items that were already done: nothing ran.
    public var reused = 0
    /// Items and files left alone, with a reason (neither a success nor a failure).
    public var skipped = 0
    /// Items that failed.
    public var failed = 0
    /// Whether a signal stopped the run.
    public var interrupted = false
    /// Stages that ran in this run.
    public var stagesRun = 0
    /// Stages whose checkpoint was reused.
    public var stagesReused = 0
    /// Bytes of the items processed (done or failed).
    public var bytes: Int64 = 0
    /// Wall time.
    public var seconds: Double = 0
    /// How many items were skipped for each group of reasons (``SkipReason/group``).
    public var skipReasons: [String: Int] = [:]

    /// A submission's own counts; nil for a run.
    public var submitted: Submitted?

    /// What a submission did with its runnable items, beside those it counts as reused, skipped or failed.
    public struct Submitted: Sendable, Hashable {
        /// Items queued now.
        public var queued: Int
        /// Items that were queued already and stay so.
        public var alreadyQueued: Int
        /// New versions of items a worker ran: they wait for a later submission.
        public var waiting: Int
        /// Items refused because a file they write is another item's (counted in ``RunSummary/failed`` too).
        public var refused: Int

        /// A submission's counts.
        public init(queued: Int, alreadyQueued: Int, waiting: Int, refused: Int) {
            (self.queued, self.alreadyQueued, self.waiting, self.refused) = (queued, alreadyQueued, waiting, refused)
        }
    }

    /// The totals as JSON (the `runFinished` event, reports; a submission's run in its ledger).
    public var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "items": .int(items), "succeeded": .int(succeeded), "reused": .int(reused), "skipped": .int(skipped),
            "failed": .int(failed), "interrupted": .bool(interrupted), "stagesRun": .int(stagesRun),
            "stagesReused": .int(stagesReused), "bytes": .int(Int(bytes)), "seconds": .double(seconds),
            "skipReasons": .object(skipReasons.mapValues { .int($0) }),
        ]
        if let submitted {
            fields["queued"] = .int(submitted.queued)
            fields["alreadyQueued"] = .int(submitted.alreadyQueued)
            fields["waiting"] = .int(submitted.waiting)
            fields["refused"] = .int(submitted.refused)
        }
        return fields
    }

    /// Totals for a run of `items` files.
    public init(items: Int) {
        self.items = items
    }
}

/// A finished run: its totals and what happened to the files (each one, or the failed ones).
public struct RunOutcome: Sendable {
    /// The totals.
    public var summary: RunSummary
    /// One result per file, in the order they finished; only the failed and interrupted ones when the runner
    /// does not keep every result (``Runner/keepsEveryResult``).
    public var results: [ItemResult]
    /// Whether ``results`` holds every file's result.
    var keepsEveryResult = true

    /// Counts a result in, and keeps it; a skipped result is counted under its reason's group.
    mutating func add(_ result: ItemResult, skipped reason: SkipReason? = nil) {
        if keepsEveryResult || result.outcome == .failed || result.outcome == .interrupted { results.append(result) }
        summary.stagesRun += result.stagesRun
        summary.stagesReused += result.stagesReused
        switch result.outcome {
        case .done: summary.succeeded += 1
        case .reused: summary.reused += 1
        case .failed: summary.failed += 1
        case .interrupted: summary.interrupted = true
        case .skipped:
            summary.skipped += 1
            summary.skipReasons[reason?.group ?? "skipped", default: 0] += 1
        }
        if result.outcome == .done || result.outcome == .failed { summary.bytes += result.bytes }
    }
}
