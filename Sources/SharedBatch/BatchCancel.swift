public import PipelineKit

/// Cancelling items of a shared batch (`pipeline cancel --db`). A cancel request is left for every item first, so
/// that no worker claims one any more; a worker that runs one stops it at its next checkpoint, runs its `onCancel`
/// stages and answers the request; the others, and those whose worker died meanwhile, are undone by the caller.
public struct BatchCancel: Sendable {
    /// What the caller hears while the cancel goes on.
    public enum Event: Sendable {
        /// Workers run this many of the items: they were asked to stop and undo them.
        case askedWorkers(Int)
        /// A worker undid this item.
        case cancelledByWorker(LedgerItem)
        /// A worker answered the request for this item without cancelling it: its undo failed.
        case workerCouldNotUndo(LedgerItem)
    }

    /// How a cancel ended.
    public enum Outcome: Sendable, Hashable {
        /// Every item was undone.
        case cancelled
        /// At least one item's undo failed; the others were undone.
        case failed
        /// The undo in this process was interrupted; nothing was waited for.
        case interrupted
    }

    /// Undoes items in the caller's process (runs their `onCancel` stages and marks them cancelled), and says how
    /// that went.
    public typealias Undo = @Sendable ([LedgerItem]) async -> RunSummary

    /// The store the requests are left in and the items read from.
    public let store: PostgresStore
    private let queue: BatchQueue
    private let workflow: String
    private let poll: Duration

    /// Cancels items of `workflow` in `database`, looking at how the workers are getting on every `poll`.
    public init(database: BatchDatabase, workflow: String, poll: Duration = .milliseconds(200)) {
        store = PostgresStore(database: database)
        queue = BatchQueue(database: database)
        self.workflow = workflow
        self.poll = poll
    }

    /// Cancels `items`: those no worker runs are undone through `undo` at once, the others by their workers (or
    /// through `undo`, when their worker dies first); `report` hears what the workers do.
    public func cancel(_ items: [LedgerItem], undo: Undo, report: (Event) -> Void) async throws -> Outcome {
        let ids = items.map(\.id)
        try await store.requestCancel(of: ids)
        let running = try await queue.queueState(of: ids).running
        if !running.isEmpty { report(.askedWorkers(running.count)) }
        var failed = false
        let here = items.filter { !running.contains($0.id) }
        if !here.isEmpty {
            let summary = await undo(here)
            if summary.interrupted { return .interrupted }
            failed = summary.failed > 0
        }
        failed = try await waitForWorkers(running, undo: undo, report: report) || failed
        return failed ? .failed : .cancelled
    }

    /// Waits until the workers have undone `items`. An item whose request was answered without a cancel failed its
    /// undo; one no live lease holds any more (its worker died) is undone through `undo`. Returns whether one failed.
    private func waitForWorkers(_ items: Set<Int64>, undo: Undo, report: (Event) -> Void) async throws -> Bool {
        var waiting = items
        var failed = false
        while !waiting.isEmpty {
            // The requests, then the leases, then the items. A worker that cancels its item takes it off the queue
            // (it no longer counts as running) and answers its request: read in this order, an item cancelled
            // between two reads is seen cancelled at the last one. Read with the items before the requests, it
            // looked as if its undo had failed; with the items before the leases, as if its worker had died, and it
            // was undone here a second time.
            let requested = try await store.cancelRequests(workflow: workflow)
            let running = try await queue.queueState(of: Array(waiting)).running
            let known = try await store.snapshot(workflow: workflow).items.filter { waiting.contains($0.id) }
            for item in known {
                if item.status == .cancelled {
                    report(.cancelledByWorker(item))
                } else if !requested.contains(item.id) {
                    report(.workerCouldNotUndo(item))
                    failed = true
                } else if !running.contains(item.id) {
                    failed = await undo([item]).failed > 0 || failed
                } else {
                    continue
                }
                waiting.remove(item.id)
            }
            waiting.formIntersection(known.map(\.id))
            if !waiting.isEmpty { try await Task.sleep(for: poll) }
        }
        return failed
    }
}
