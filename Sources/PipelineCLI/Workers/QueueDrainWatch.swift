import Notifications
import PipelineKit
import SharedBatch

/// Announces a shared batch's end: the worker whose item leaves a workflow's queue empty (nothing queued, nothing
/// running) sends its summary. Every worker looks when one of its items starts or finishes; a workflow is
/// announced only after this worker saw work in its queue, and the ledger's record of sent notifications keeps
/// two workers that look at the same moment from both sending it.
actor QueueDrainWatch {
    private let queue: BatchQueue
    private let store: PostgresStore
    private let notifier: Notifier
    /// Workflows whose queue had work at this worker's last look.
    private var busy: Set<String> = []

    init(database: BatchDatabase, notifier: Notifier) {
        queue = BatchQueue(database: database)
        store = PostgresStore(database: database)
        self.notifier = notifier
    }

    /// Looks at the queue soon, without holding up the caller (a run's event).
    nonisolated func lookSoon() {
        Task { await look() }
    }

    private func look() async {
        guard let status = try? await queue.status(listingFailed: false) else { return }
        for (workflow, counts) in status.workflows {
            if counts.queued + counts.running > 0 {
                busy.insert(workflow)
            } else if busy.remove(workflow) != nil {
                await RunCommand.announceFinish(of: workflow, skipped: 0, store: store, notifier: notifier)
            }
        }
    }
}
