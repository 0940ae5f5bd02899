public import Foundation
import StageKit

/// A run of a state folder or a submission of a shared batch, as its ledger recorded it: when it started and
/// ended, what its summary counted, and how it ended (``Outcome``).
public struct PastRun: Sendable, Hashable {
    /// How a run ended, in the words the dashboard shows.
    public enum Outcome: String, Sendable, CaseIterable {
        /// Not finished and still held by the process that runs it (a submission: its session's advisory lock).
        case running
        /// Finished, and none of its items failed.
        case finished
        /// Finished with failed items.
        case failedItems = "failed items"
        /// Stopped by a signal (Ctrl-C, SIGTERM): it recorded its end with what it had done.
        case cancelled
        /// Never finished, and no process runs it any more (`kill -9`, a crash, a power cut).
        case interrupted
    }

    /// The run's number in its ledger.
    public var id: Int64
    /// The workflow it ran (or submitted).
    public var workflow: String
    /// When it started.
    public var startedAt: Date
    /// When it finished; nil while it runs and for a run that never finished.
    public var finishedAt: Date?
    /// What its summary counted, by the dashboard's names: a run's `done`, `reused`, `skipped`, `failed`; a
    /// submission's `queued`, `alreadyQueued`, `waiting` (for a later submission), `refused`, `reused` (done
    /// already), `skipped`, `failed` (refused or damaged); an older submission's summary gives no `alreadyQueued`,
    /// `waiting` or `refused`, and its `queued` is inferred. Empty without a summary.
    public var counts: [String: Int]
    /// Bytes of the items it processed (a submission: of those it queued).
    public var bytes: Int64
    /// How it ended.
    public var outcome: Outcome

    /// A past run.
    public init(
        id: Int64, workflow: String, startedAt: Date, finishedAt: Date?, counts: [String: Int], bytes: Int64,
        outcome: Outcome
    ) {
        self.id = id
        self.workflow = workflow
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.counts = counts
        self.bytes = bytes
        self.outcome = outcome
    }

    /// A run as a ledger's row holds it: its summary as the JSON ``RunSummary/fields`` wrote, and whether a process
    /// still runs it when it has not finished (`stillRuns`). A submission counts as queued what its summary does
    /// not count otherwise (its items less the done, skipped and failed ones) unless it recorded its own counts.
    public init(
        id: Int64, workflow: String, startedAt: Date, finishedAt: Date?, summary: String?, stillRuns: Bool,
        submission: Bool
    ) {
        let fields = summary.flatMap { try? JSONValue(parsing: $0) }
        func count(_ key: String) -> Int { fields?[key]?.intValue ?? 0 }
        var counts: [String: Int] = [:]
        if fields != nil {
            counts = ["reused": count("reused"), "skipped": count("skipped"), "failed": count("failed")]
            if submission, fields?["queued"] != nil {
                for key in ["queued", "alreadyQueued", "waiting", "refused"] { counts[key] = count(key) }
            } else if submission {
                // Written before submissions recorded their own counts: inferred, already queued and waiting included.
                counts["queued"] = max(0, count("items") - count("reused") - count("skipped") - count("failed"))
            } else {
                counts["done"] = count("succeeded")
            }
        }
        let outcome: Outcome
        if finishedAt == nil {
            outcome = stillRuns ? .running : .interrupted
        } else if fields?["interrupted"]?.boolValue == true {
            outcome = .cancelled
        } else {
            outcome = count("failed") > 0 ? .failedItems : .finished
        }
        self.init(
            id: id, workflow: workflow, startedAt: startedAt, finishedAt: finishedAt, counts: counts,
            bytes: Int64(count("bytes")), outcome: outcome)
    }
}

/// A page of past runs, newest first, and how many the ledger holds in all.
public struct RunPage: Sendable {
    /// The page.
    public var runs: [PastRun]
    /// How many runs the ledger holds.
    public var total: Int

    /// A page.
    public init(runs: [PastRun], total: Int) {
        self.runs = runs
        self.total = total
    }
}
