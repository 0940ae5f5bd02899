import NIOConcurrencyHelpers

/// The items a run is working on, so that `pipeline cancel` from another process can stop one of them: the
/// item's stages are cancelled (the running one stops at its next checkpoint) and its `onCancel` stages run.
/// Runners given the same running items answer a cancel request for any of them.
public final class RunningItems: Sendable {
    private struct State {
        var cancels: [Int64: @Sendable () -> Void] = [:]
        var requested: Set<Int64> = []
        var runs = 0
    }

    private let state = NIOLockedValueBox(State())

    /// No items yet.
    public init() {}

    /// Registers an item's work with the way to cancel it; cancels it at once when a cancel was already
    /// asked for.
    func start(_ item: Int64, cancel: @escaping @Sendable () -> Void) {
        let requested = state.withLockedValue { state in
            state.cancels[item] = cancel
            return state.requested.contains(item)
        }
        if requested { cancel() }
    }

    /// Counts a run in or out: requests that arrive while no run is under way are undone at once.
    func run(started: Bool) {
        state.withLockedValue { $0.runs += started ? 1 : -1 }
    }

    /// Whether no run is under way (a `pipeline watch` waiting for files).
    var isIdle: Bool {
        state.withLockedValue { $0.runs == 0 }
    }

    /// Forgets an item's work once it ended.
    func finish(_ item: Int64) {
        state.withLockedValue { _ = $0.cancels.removeValue(forKey: item) }
    }

    /// Asks for items to be cancelled: running ones are cancelled now, the others when they start. Returns
    /// the items that were running.
    func cancel(_ items: Set<Int64>) -> Set<Int64> {
        let cancels = state.withLockedValue { state in
            state.requested.formUnion(items)
            return state.cancels.filter { items.contains($0.key) }
        }
        for cancel in cancels.values { cancel() }
        return Set(cancels.keys)
    }

    /// Cancels those of `items` that are running now, and asks nothing for the others: a worker's heartbeat
    /// names the items it held, and one that ended meanwhile must not be cancelled when it is queued again.
    func cancelIfRunning(_ items: Set<Int64>) {
        let cancels = state.withLockedValue { state in
            let running = state.cancels.filter { items.contains($0.key) }
            state.requested.formUnion(running.keys)
            return running
        }
        for cancel in cancels.values { cancel() }
    }

    /// Forgets a cancel request once its item ended (undone, or finished before the request reached it), so
    /// that a long-lived runner (a worker, `pipeline watch`) runs the item normally when it is queued again.
    func settle(_ item: Int64) {
        state.withLockedValue { _ = $0.requested.remove(item) }
    }

    /// Whether a cancel was asked for an item.
    func isRequested(_ item: Int64) -> Bool {
        state.withLockedValue { $0.requested.contains(item) }
    }
}
