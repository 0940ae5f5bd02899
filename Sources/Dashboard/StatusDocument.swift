import Foundation
import PipelineKit
import SharedBatch
import StageKit

/// The JSON of `GET /api/status`: per workflow, its items counted under the status names the API keeps stable.
enum StatusDocument {
    /// The statuses every workflow's `counts` has, in the order the page shows them.
    static let statusNames = ["queued", "running", "done", "failed", "skipped", "cancelled", "interrupted"]

    /// The API's name of a ledger status.
    static func name(of status: ItemStatus) -> String { status.reportedName }

    /// How many minutes the throughput looks back.
    static let window = 10

    /// How many minutes the chart of items done shows, up to the last item done.
    static let chartMinutes = 120

    /// The document, read from `ledger` and, for a shared batch, `queue`.
    static func read(
        ledger: (any LedgerBrowsing)?, queue: BatchQueue?, source: String, readOnly: Bool
    ) async throws -> JSONValue {
        let batch = try await queue?.status(listingFailed: false)
        let tallies = try await ledger?.statusCounts() ?? [:]
        let runs = try await ledger?.lastRunSummaries() ?? [:]
        let underWay = batch == nil ? try await ledger?.runsUnderWay() ?? [:] : [:]
        let names = Set(tallies.keys).union(underWay.keys).union(batch.map { Array($0.workflows.keys) } ?? []).sorted()
        var workflows: [JSONValue] = []
        let now = Date()
        for workflow in names {
            let counts = self.counts(
                queues: batch?.workflows[workflow], tallies: tallies[workflow] ?? [:],
                run: runs[workflow], underWay: underWay[workflow])
            let minutes = try await ledger?.doneByMinute(workflow: workflow, minutes: chartMinutes) ?? []
            // Over the last `window` minutes, or since the first of them that had items done: a batch that started
            // two minutes ago is not averaged over ten.
            let recent = minutes.filter { now.timeIntervalSince($0.minute) < Double(window * 60) }
            let span = max(1, (recent.first.map { now.timeIntervalSince($0.minute) } ?? 60) / 60)
            let perMinute = Double(recent.reduce(0) { $0 + $1.done }) / span
            let left = (counts["queued"] ?? 0) + (counts["running"] ?? 0)
            var entry: [String: JSONValue] = [
                "name": .string(workflow),
                "counts": .object(counts.mapValues { .int($0) }),
                "total": .int(counts.values.reduce(0, +) - (counts["skipped"] ?? 0)),
                "bytesDone": .int(Int(tallies[workflow]?[.succeeded]?.bytes ?? 0)),
                "itemsPerMinute": .double((perMinute * 100).rounded() / 100),
                "etaSeconds": perMinute > 0 && left > 0 ? .int(Int(Double(left) / perMinute * 60)) : .null,
                "doneByMinute": .array(
                    minutes.map {
                        JSONValue.array([.string($0.minute.formatted(.iso8601)), .int($0.done)])
                    }),
            ]
            if let run = runs[workflow] {
                entry["lastRun"] = [
                    "startedAt": .string(run.startedAt.formatted(.iso8601)),
                    "finishedAt": .string(run.finishedAt.formatted(.iso8601)), "bytes": .int(Int(run.bytes)),
                ]
            }
            workflows.append(.object(entry))
        }
        var document: [String: JSONValue] = [
            "source": .string(source), "readOnly": .bool(readOnly), "time": .string(now.formatted(.iso8601)),
            "workflows": .array(workflows),
        ]
        if let batch {
            // Judged by the database's clock, as asking and pruning judge them.
            document["workers"] = .array(batch.workers.map { worker($0, at: batch.readAt) })
            document["splits"] = .array(batch.splits.map(\.document))
            document["progress"] = .array(progress(of: batch.workers, at: batch.readAt))
        }
        return .object(document)
    }

    /// A workflow's items by the page's status names. A shared batch counts as `status --db` does: queued and running
    /// from the queue, the rest by status. A local state folder by status, with the files the run under way planned
    /// and has not started as queued (a run admits a file only when it starts it).
    private static func counts(
        queues: BatchStatus.Counts?, tallies: [ItemStatus: ItemTally],
        run: RunTotals?, underWay: RunUnderWay?
    ) -> [String: Int] {
        var counts = Dictionary(uniqueKeysWithValues: statusNames.map { ($0, 0) })
        if let queues {
            counts["queued", default: 0] += queues.queued
            counts["running", default: 0] += queues.running
            for (status, count) in queues.byStatus {
                counts[ItemStatus(rawValue: status).map(name(of:)) ?? status, default: 0] += count
            }
        } else {
            for (status, tally) in tallies { counts[name(of: status), default: 0] += tally.count }
            counts["skipped"] = run?.skipped ?? 0
            counts["queued"] = underWay?.queued(itemsNow: tallies.values.reduce(0) { $0 + $1.count }) ?? 0
        }
        return counts
    }

    /// A worker with its `state` by the rule `status --db` follows (``SharedBatch/WorkerState``: `live`, `draining`,
    /// `stopping`; `silent`: its lease ran out without it saying it stopped, so it was killed or cut off and other
    /// workers take its items; `stopped`) and, once gone, since when: the page shows both of the last as stopped.
    private static func worker(_ worker: BatchStatus.Worker, at now: Date) -> JSONValue {
        let stoppedSince = worker.stoppedSince(at: now)
        let state = worker.state(at: now)
        return [
            "id": .string(worker.id), "host": .string(worker.host), "pid": .int(worker.pid),
            "state": .string(state.reported), "live": .bool(state.isLive),
            "request": worker.request.map { .string($0.rawValue) } ?? .null,
            "stoppedAt": stoppedSince.map { .string($0.formatted(.iso8601)) } ?? .null,
            "heartbeatAt": .string(worker.heartbeatAt.formatted(.iso8601)), "holding": .int(worker.holding),
            "done": .int(Int(worker.done)), "failed": .int(Int(worker.failed)), "tookOver": .int(Int(worker.tookOver)),
        ]
    }

    /// The stages live workers run now, as each last published them, with the worker that runs them: a stopped or
    /// silent worker's are not running any more.
    private static func progress(of workers: [BatchStatus.Worker], at now: Date) -> [JSONValue] {
        workers.filter { $0.state(at: now).isLive }.flatMap { worker in
            worker.running.map { running -> JSONValue in
                guard case .object(var fields) = running.document else { return running.document }
                fields["worker"] = .string(worker.id)
                return .object(fields)
            }
        }
    }
}
