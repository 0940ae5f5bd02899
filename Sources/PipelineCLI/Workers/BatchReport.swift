import Foundation
import PipelineKit
import SharedBatch

import enum StageKit.JSONValue

/// The workers and the queue of a shared batch, as `pipeline status --db` shows them.
enum BatchReport {
    /// Reads the batch's state; a database that cannot be read ends the command with exit code 1.
    static func status(of queue: BatchQueue) async throws(CommandFailure) -> BatchStatus {
        do {
            return try await queue.status()
        } catch {
            throw .failed(error)
        }
    }

    /// Prints the workers (live ones first) and each workflow's queue.
    static func print(_ status: BatchStatus) {
        let now = status.readAt
        let rows = status.workers.sorted {
            ($0.state(at: now).isLive ? 0 : 1, $0.startedAt) < ($1.state(at: now).isLive ? 0 : 1, $1.startedAt)
        }
        .map { worker in
            [
                worker.id, worker.host, "\(worker.pid)", worker.state(at: now).word,
                "\(Int(now.timeIntervalSince(worker.heartbeatAt)))s ago", "\(worker.holding)", "\(worker.done)",
                "\(worker.failed)", "\(worker.tookOver)",
            ]
        }
        if rows.isEmpty {
            Output.line("no workers yet")
        } else {
            Output.line(
                StatusCommand.table(
                    header: [
                        "WORKER", "HOST", "PID", "STATE", "HEARTBEAT", "HOLDING", "DONE", "FAILED", "TOOK OVER",
                    ], rows: rows))
        }
        for (workflow, counts) in status.workflows.sorted(by: { $0.key < $1.key }) {
            let others = counts.byStatus.sorted { $0.key < $1.key }.map { "\($0.value) \(label($0.key))" }
            Output.line(
                "\(workflow): \(counts.queued) queued, \(counts.running) running"
                    + (others.isEmpty ? "" : ", " + others.joined(separator: ", ")))
        }
        for item in status.failed {
            Output.line("  \(item.input.relativePath): \(item.error?.message ?? "failed")")
        }
        for split in status.splits {
            Output.line(
                "split: \(split.path): \(split.units) units, \(split.done) done, \(split.running) encoding, "
                    + "\(percent(split.progress)) encoded (plan \(split.plan))")
            for unit in split.encoding {
                Output.line("  unit \(unit.unit): \(percent(unit.progress)) on \(unit.worker)")
            }
        }
        Output.line("")
    }

    /// The batch's state and the workflows' items, for `--json`.
    static func json(_ status: BatchStatus, workflows: [JSONValue]) -> JSONValue {
        let workers: [JSONValue] = status.workers.map { worker in
            let state = worker.state(at: status.readAt)
            return [
                "id": .string(worker.id), "host": .string(worker.host), "pid": .int(worker.pid),
                "state": .string(state.reported), "live": .bool(state.isLive),
                "request": worker.request.map { .string($0.rawValue) } ?? .null,
                "startedAt": .string(worker.startedAt.formatted(.iso8601)),
                "heartbeatAt": .string(worker.heartbeatAt.formatted(.iso8601)), "holding": .int(worker.holding),
                "done": .int(Int(worker.done)), "failed": .int(Int(worker.failed)),
                "tookOver": .int(Int(worker.tookOver)),
            ]
        }
        let queues: [String: JSONValue] = status.workflows.mapValues { counts in
            [
                "queued": .int(counts.queued), "running": .int(counts.running),
                "items": .object(counts.byStatus.mapValues { .int($0) }),
            ]
        }
        return [
            "workers": .array(workers), "queues": .object(queues), "splits": .array(status.splits.map(\.document)),
            "workflows": .array(workflows),
        ]
    }

    /// A fraction as a whole percentage, rounded down: 100 % only when it is all done.
    private static func percent(_ fraction: Double) -> String {
        "\(Int((fraction * 100).rounded(.down))) %"
    }

    private static func label(_ status: String) -> String {
        status == ItemStatus.succeeded.rawValue ? "done" : status
    }
}
