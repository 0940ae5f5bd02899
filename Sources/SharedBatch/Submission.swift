public import PipelineKit
import StageKit

/// Admits the runnable items of a plan to a shared batch: new items and new versions are admitted to the ledger,
/// then queued with the stored workflow. Items already queued are left as they are, and a new version of an item
/// a worker runs right now waits for the next submission, so submitting the same files twice queues nothing new.
public struct Submission: Sendable {
    /// What a submission did with each item of its plan.
    public struct Summary: Sendable, Hashable {
        /// Items admitted and queued now.
        public var queued = 0
        /// Items that were queued already and stay so.
        public var alreadyQueued = 0
        /// New versions of items a worker runs right now: they wait for a later submission.
        public var running = 0
        /// Items done with the same content.
        public var done = 0
        /// Items the plan skips (a filter or a limit, or no admission).
        public var skipped = 0
        /// Items whose file is named as media but FFmpeg cannot read (``PlannedItem/damage``): admitted and
        /// recorded as failed, not queued.
        public var damaged = 0
        /// Items that would write a file another item writes (``PlannedItem/collision``, or another item claimed it
        /// since the plan was made): admitted and recorded as failed, not queued.
        public var refused = 0
    }

    /// The plan, made against ``store``.
    public var plan: BatchPlan
    /// The shared batch's ledger.
    public var store: PostgresStore
    /// The shared batch's queue.
    public var queue: BatchQueue

    /// Hides the values of the workflow's `env` in the failures it records (a refused item's path may hold one).
    public var redactor: SecretRedactor

    /// A submission of `plan` to the batch of `store` and `queue`, its failures redacted by `redactor`.
    public init(plan: BatchPlan, store: PostgresStore, queue: BatchQueue, redactor: SecretRedactor) {
        self.plan = plan
        self.store = store
        self.queue = queue
        self.redactor = redactor
    }

    /// Stores `workflow`, admits and queues the plan's runnable items, records where done items are now, and
    /// writes the submission to the ledger as a run.
    /// The submission holds its run's lock until it has finished (``PostgresStore/holdingSubmission(_:_:)``), so
    /// that the run history tells it under way from killed.
    public func submit(_ workflow: SubmittedWorkflow) async throws(StateError) -> Summary {
        let (queued, running) = try await queue.queueState(of: plan.runnable.compactMap(\.known?.id))
        let id = try await queue.store(workflow)
        let run = try await store.beginRun(
            RunRecord(workflow: workflow.name, file: workflow.file, stages: workflow.stages),
            caching: plan.cacheEntries, sightings: [])
        return try await store.holdingSubmission(run) { () async throws(StateError) -> Summary in
            try await admit(workflow, storedAs: id, run: run, queued: queued, running: running)
        }
    }

    /// Admits and queues the plan's runnable items (the ids `queued` are queued already, those of `running` run
    /// now) with the workflow stored as `stored`, and finishes `run` with the totals.
    private func admit(
        _ workflow: SubmittedWorkflow, storedAs id: Int64, run: Int64, queued: Set<Int64>, running: Set<Int64>
    ) async throws(StateError) -> Summary {
        var summary = Summary()
        var admitted: [Int64: String] = [:]
        var queuedBytes: Int64 = 0
        for item in plan.items {
            switch item.action {
            case .reuse: summary.done += 1
            case .skip: summary.skipped += 1
            case .run(let reason):
                guard let admission = item.admission else {
                    summary.skipped += 1
                    continue
                }
                if let known = item.known?.id, queued.contains(known) {
                    if running.contains(known) && reason.newVersion {
                        summary.running += 1
                        continue
                    }
                    if !reason.newVersion {
                        summary.alreadyQueued += 1
                        continue
                    }
                }
                let ref = try await store.admit(admission, workflow: workflow.name).ref
                if let damage = item.damage {
                    try await fail(item, ref: ref, StageFailure.damagedInput(damage))
                    summary.damaged += 1
                    continue
                }
                if let collision = try await collision(of: item, ref: ref, workflow: workflow.name) {
                    try await fail(item, ref: ref, collision.failure)
                    summary.refused += 1
                    continue
                }
                admitted[ref.item] = item.digest
                queuedBytes += item.input.size
            }
        }
        try await queue.enqueue(admitted, with: id)
        summary.queued = admitted.count
        try await store.recordPaths(plan.sightings)
        var totals = RunSummary(items: plan.items.count + plan.passedOver.count)
        totals.reused = summary.done
        totals.skipped = summary.skipped + plan.passedOver.count
        totals.failed = summary.damaged + summary.refused
        // A submission processes nothing itself: its bytes are those it queued (the dashboard's run history).
        totals.bytes = queuedBytes
        totals.submitted = RunSummary.Submitted(
            queued: summary.queued, alreadyQueued: summary.alreadyQueued, waiting: summary.running,
            refused: summary.refused)
        try await store.finishRun(run, summary: totals)
        return summary
    }

    /// Why an admitted item may not be queued: a file it writes is another item's, as the plan found or as its claim
    /// finds now (another submission may have queued a writer of it since). Otherwise its files are claimed.
    private func collision(of item: PlannedItem, ref: ItemVersion, workflow: String) async throws(StateError)
        -> OutputCollision?
    {
        if let collision = item.collision { return collision }
        return try await store.claimOutputs(item.destinations, for: ref, workflow: workflow).map(OutputCollision.init)
    }

    /// Records an admitted item as failed with `failure`, without queueing it.
    private func fail(_ item: PlannedItem, ref: ItemVersion, _ failure: StageFailure) async throws(StateError) {
        let result = ItemResult(
            ref: ref, fingerprint: item.fingerprint, path: item.input.path, outcome: .failed,
            reason: redactor.redact(failure.message),
            errorKind: failure.kind, bytes: item.input.size)
        try await store.finish(ref, result: result, digest: nil)
    }
}
