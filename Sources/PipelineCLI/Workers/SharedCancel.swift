import Foundation
import PipelineKit
import SharedBatch

import struct StageKit.InputItem

/// `pipeline cancel --db`: cancels items of a shared batch. A cancel request is left for every item first, so
/// no worker claims one any more; a worker that runs one stops it at its next checkpoint and runs its onCancel
/// stages (it sees the request at its next heartbeat); the others are undone in this process.
struct SharedCancel {
    var workflow: Workflow
    var registry: StageRegistry
    var environment: [String: String]
    var items: [String]
    var json: Bool

    func run(database: BatchDatabase) async throws {
        let store = PostgresStore(database: database)
        let queue = BatchQueue(database: database)
        do {
            let selected = try ItemSelection.select(
                items, in: try await store.snapshot(workflow: workflow.name), workflow: workflow.name)
            let ids = selected.map(\.id)
            try await store.requestCancel(of: ids)
            let running = try await queue.queueState(of: ids).running
            let here = selected.filter { !running.contains($0.id) }
            if !running.isEmpty {
                Output.error(
                    "pipeline: \(running.count) item(s) are running on workers; asked them to stop and undo them")
            }
            var failed = false
            if !here.isEmpty {
                let summary = await CancelCommand.undo(
                    here, workflow: workflow, registry: registry, store: store,
                    scratchRoot: FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-cancel"),
                    environment: environment, json: json)
                if summary.interrupted { throw CommandFailure(.interrupted) }
                failed = summary.failed > 0
            }
            failed = try await waitForWorkers(running, store: store, queue: queue) || failed
            if failed { throw CommandFailure(.failed) }
        } catch let error as StateError {
            throw CommandFailure.failed(error)
        }
    }

    /// Waits until the workers have undone `items`. An item whose request was answered without a cancel failed
    /// its undo; one no live lease holds any more (its worker died) is undone here. Returns whether one failed.
    private func waitForWorkers(_ items: Set<Int64>, store: PostgresStore, queue: BatchQueue) async throws -> Bool {
        var waiting = items
        var failed = false
        while !waiting.isEmpty {
            // The requests before the items: a worker answers a request once its item is cancelled, so an item read
            // after its request is gone shows whether the undo succeeded (read the other way round, an item
            // cancelled between the two reads looked as if its undo had failed).
            let requested = try await store.cancelRequests(workflow: workflow.name)
            let known = try await store.snapshot(workflow: workflow.name).items.filter { waiting.contains($0.id) }
            let running = try await queue.queueState(of: Array(waiting)).running
            for item in known {
                if item.status == .cancelled {
                    Output.line("cancelled \(item.input.relativePath)")
                } else if !requested.contains(item.id) {
                    Output.error("pipeline: the worker could not undo \(item.input.relativePath); see its output")
                    failed = true
                } else if !running.contains(item.id) {
                    let summary = await CancelCommand.undo(
                        [item], workflow: workflow, registry: registry, store: store,
                        scratchRoot: FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-cancel"),
                        environment: environment, json: json)
                    failed = failed || summary.failed > 0
                } else {
                    continue
                }
                waiting.remove(item.id)
            }
            waiting.formIntersection(known.map(\.id))
            if !waiting.isEmpty { try await Task.sleep(for: .milliseconds(200)) }
        }
        return failed
    }
}
