import Foundation
import NIOConcurrencyHelpers
public import PipelineKit
import PostgresNIO
public import StageKit

/// A stage a worker runs now, as it published it: the same ``PipelineKit/RunningStage`` a local run writes to its
/// progress file, with the workflow it belongs to.
public struct WorkerStage: Sendable, Hashable {
    /// The workflow's name.
    public var workflow: String
    /// The stage, its progress, rate and ETA.
    public var stage: RunningStage

    /// A stage of `workflow`.
    public init(workflow: String, stage: RunningStage) {
        self.workflow = workflow
        self.stage = stage
    }

    /// The stage's document with its workflow, as the progress column holds it.
    public var document: JSONValue {
        guard case .object(var fields) = stage.document else { return stage.document }
        fields["workflow"] = .string(workflow)
        return .object(fields)
    }

    /// The stages of a progress column's JSON (an array of ``document``s); none when it holds nothing readable.
    static func list(parsing text: String?) -> [WorkerStage] {
        guard let text, let array = (try? JSONValue(parsing: text))?.arrayValue else { return [] }
        return array.compactMap { document in
            guard let workflow = document["workflow"]?.stringValue, let stage = RunningStage(document: document) else {
                return nil
            }
            return WorkerStage(workflow: workflow, stage: stage)
        }
    }
}

/// The running stages of a worker's runners (each publishes through its ``PipelineKit/ProgressBoard``), kept until
/// the worker writes them to its `workers` row: at most once a second, and only when they changed.
final class WorkerProgress: Sendable {
    private struct Board {
        /// By the submitted workflow's key: two versions of one workflow keep their stages apart.
        var stages: [String: [WorkerStage]] = [:]
        var changed = false
    }

    private let board = NIOLockedValueBox(Board())

    /// What the runner of the workflow keyed `key`, named `name`, runs now.
    func update(key: String, name: String, _ stages: [RunningStage]) {
        board.withLockedValue { board in
            board.stages[key] = stages.map { WorkerStage(workflow: name, stage: $0) }
            board.changed = true
        }
    }

    /// The stages to write, as the progress column's JSON (nil for none), when they changed since the last take.
    func takeChange() -> String?? {
        board.withLockedValue { board -> String?? in
            guard board.changed else { return .none }
            board.changed = false
            let all = board.stages.values.joined().sorted {
                ($0.stage.startedAt, $0.stage.item, $0.stage.stage) < (
                    $1.stage.startedAt, $1.stage.item, $1.stage.stage
                )
            }
            return .some(all.isEmpty ? nil : JSONValue.array(all.map(\.document)).serialized())
        }
    }

    /// Marks the stages as not written (a write that failed is tried again at the next tick).
    func markUnwritten() {
        board.withLockedValue { $0.changed = true }
    }
}

extension BatchStatus.Worker {
    /// A worker of `BatchQueue.status()`'s query, by its columns' names.
    init(row: PostgresRow) throws {
        let columns = try NamedColumns(row)
        id = try columns["worker_id"]
        host = try columns["host"]
        pid = Int(try columns["pid"] as Int32)
        startedAt = try columns["started_at"]
        heartbeatAt = try columns["heartbeat_at"]
        stoppedAt = try columns["stopped_at"]
        done = try columns["done"]
        failed = try columns["failed"]
        holding = Int(try columns["holding"] as Int64)
        lease = try columns["lease"]
        request = (try columns["request"] as String?).flatMap(WorkerRequest.init(rawValue:))
        tookOver = try columns["took_over"]
        running = WorkerStage.list(parsing: try columns["progress"])
    }
}
