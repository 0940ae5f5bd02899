public import Foundation
public import Logging
import NIOConcurrencyHelpers
public import StageKit

/// Runs a workflow's stages over the items of a ``BatchPlan``, checkpointing every step in a ``StateStore``
/// so that a rerun continues where a crash or a signal stopped it.
///
/// Items run independently (up to `jobs` at a time) and one failing item never stops the others. Within an
/// item, each stage runs once the stages it waits for are done (``StageGraph``), branches side by side; a stage
/// whose checkpoint says it succeeded with the same resolved options is not run again, and when a stage does
/// run, the checkpoints of the stages that wait for it are dropped first, so they run again too.
///
/// The runner's work is split by concern: items (`Runner+Items`), the order of an item's stages and its
/// branches (`Runner+Branches`), the decisions of one stage
/// (`Runner+Stages`), attempts with retries, timeouts and credential renewal (`Runner+Attempt`), and
/// `pipeline cancel` with the workflow's `onCancel` stages (`Runner+Cancel`).
public struct Runner: Sendable {
    /// The workflow to run.
    public let workflow: Workflow
    /// The stage types.
    public let registry: StageRegistry
    /// Where checkpoints go.
    public var store: any StateStore
    /// Keeps secrets out of the store and the events.
    public var redactor: SecretRedactor
    /// Where stages get their scratch folders (`<state>/scratch`).
    public var scratchRoot: URL
    /// `env.*`.
    public var environment: [String: String]
    /// Items processed at the same time.
    public var jobs: Int
    /// Stages at once per resource.
    public var resourceLimits: ResourceLimits { slots.limits }
    /// The resource slots this runner's stages wait for; runners that share them share the limits.
    public let slots: ResourceSlots
    /// The items this runner works on, so that a cancel asked for elsewhere reaches them.
    public let running: RunningItems
    /// Shared resources for stages.
    public var services: ServiceValues
    /// The lowest level of stage log lines that are reported.
    public var logLevel: Logger.Level
    /// Receives the run's events.
    public var sink: any RunEventSink
    /// Whether ``RunOutcome/results`` holds every file's result (a report needs them), or only the failed and
    /// interrupted ones: the summary counts every file either way, and a batch of 100,000 files run without a
    /// report does not hold 100,000 results.
    public var keepsEveryResult = true
    /// The workflow's stages with their stage types, looked up once.
    let stages: [ResolvedStage]
    /// Which stages each stage waits for.
    let graph: StageGraph
    /// The workflow's `onCancel` stages with their stage types.
    let onCancelStages: [ResolvedStage]
    /// Whether a history write failed in this run (it is told once).
    let historyWriteFailed = NIOLockedValueBox(false)

    /// Creates a runner with resource slots and running items of its own.
    public init(
        workflow: Workflow, registry: StageRegistry, store: any StateStore, redactor: SecretRedactor = .none,
        scratchRoot: URL, environment: [String: String], jobs: Int = 1,
        resourceLimits: ResourceLimits = ResourceLimits(),
        services: ServiceValues = ServiceValues(), logLevel: Logger.Level = .info, sink: any RunEventSink
    ) {
        self.init(
            workflow: workflow, registry: registry, store: store, redactor: redactor, scratchRoot: scratchRoot,
            environment: environment, jobs: jobs, slots: ResourceSlots(resourceLimits), running: RunningItems(),
            services: services, logLevel: logLevel, sink: sink)
    }

    /// Creates a runner that shares `slots` and `running` with others: a worker's runners, one per workflow
    /// version, hold `--cpu-jobs` and `--transfers` together and answer cancel requests for any of its items.
    public init(
        workflow: Workflow, registry: StageRegistry, store: any StateStore, redactor: SecretRedactor = .none,
        scratchRoot: URL, environment: [String: String], jobs: Int = 1, slots: ResourceSlots,
        running: RunningItems, services: ServiceValues = ServiceValues(), logLevel: Logger.Level = .info,
        sink: any RunEventSink
    ) {
        self.workflow = workflow
        self.registry = registry
        self.store = store
        self.redactor = redactor
        self.scratchRoot = scratchRoot
        self.environment = environment
        self.jobs = max(1, jobs)
        self.slots = slots
        self.running = running
        var services = services
        services[DamagedInputPolicyKey.self] = workflow.inputs?.damaged ?? .default
        self.services = services
        self.logLevel = logLevel
        self.sink = sink
        let graph = workflow.graph
        self.graph = graph
        self.stages = workflow.stages.enumerated().map { index, spec in
            ResolvedStage(spec, registry: registry, after: graph.waitIDs(of: index))
        }
        self.onCancelStages = workflow.onCancel.map { ResolvedStage($0, registry: registry) }
    }

    /// The stage decisions, shared with `pipeline plan`.
    public var decisions: StageDecisions {
        StageDecisions(workflow: workflow, redactor: redactor, environment: environment)
    }

    /// Carries out a plan; returns when every item is done, or when the task is cancelled (then running
    /// stages are checkpointed as interrupted and items not started are left for the next run). Throws only
    /// when the store cannot record the run at all.
    public func run(_ plan: BatchPlan, file: String) async throws(StateError) -> RunOutcome {
        let clock = ContinuousClock()
        let start = clock.now
        let runID = try await store.beginRun(
            RunRecord(
                workflow: workflow.name, file: file, stages: workflow.stages.map(\.id),
                newItems: plan.newItems),
            caching: plan.cacheEntries, sightings: plan.sightings)
        sink.emit(RunStarted(workflow: workflow.name, items: plan.items.count, stages: workflow.stages.count))
        running.run(started: true)
        await applyCancelRequests()
        var outcome = RunOutcome(summary: RunSummary(items: plan.items.count + plan.passedOver.count), results: [])
        outcome.keepsEveryResult = keepsEveryResult
        if keepsEveryResult { outcome.results.reserveCapacity(plan.items.count + plan.passedOver.count) }
        recordDecided(plan, into: &outcome)
        // The action is looked at in place: a rerun's reused items are not copied to be passed over.
        let runnable = plan.items.indices.lazy.filter { index in
            if case .run = plan.items[index].action { true } else { false }
        }
        var leftWork = await runItems(runnable.compactMap { ItemToRun(plan.items[$0]) }, into: &outcome)
        running.run(started: false)
        if !Task.isCancelled {
            for end in await undoLeftoverRequests() { outcome.add(end.result, skipped: end.skipped) }
        } else if let requests = try? await store.cancelRequests(workflow: workflow.name), !requests.isEmpty {
            leftWork = true  // cancels not carried out: the next run does them
        }
        // A stop that came once every item had ended, with no cancel left to carry out, cut nothing short.
        outcome.summary.interrupted = outcome.summary.interrupted || leftWork
        outcome.summary.seconds = (clock.now - start).seconds
        try? await store.finishRun(runID, summary: outcome.summary)
        sink.emit(RunFinished(summary: outcome.summary))
        return outcome
    }

    /// Counts in the files the plan already settled: those the selection passed over, and the items it reuses
    /// or skips. Items are read by index, in place: a no-op rerun of a large folder copies none of them.
    private func recordDecided(_ plan: BatchPlan, into outcome: inout RunOutcome) {
        for passed in plan.passedOver {
            outcome.add(
                ItemResult(
                    ref: nil, fingerprint: nil, path: passed.path, outcome: .skipped,
                    reason: passed.reason.description),
                skipped: passed.reason)
        }
        for index in plan.items.indices {
            let result: ItemResult
            var skipped: SkipReason?
            switch plan.items[index].action {
            case .run: continue
            case .reuse(let ref, let reason):
                result = ItemResult(
                    ref: ref, fingerprint: plan.items[index].fingerprint, path: plan.items[index].input.path,
                    outcome: .reused, reason: reason.description, bytes: plan.items[index].input.size)
            case .skip(let reason):
                skipped = reason
                result = ItemResult(
                    ref: plan.items[index].known?.current, fingerprint: plan.items[index].fingerprint,
                    path: plan.items[index].input.path, outcome: .skipped, reason: reason.description,
                    bytes: plan.items[index].input.size)
            }
            sink.emit(
                ItemFinished(
                    item: plan.items[index].input.relativePath, outcome: result.outcome, reason: result.reason))
            outcome.add(result, skipped: skipped)
        }
    }

    /// Runs `items`, `jobs` at a time; none starts once the task is cancelled. Returns whether the
    /// cancellation left items that never started.
    private func runItems(_ items: some Sequence<ItemToRun>, into outcome: inout RunOutcome) async -> Bool {
        await withTaskGroup(of: ItemEnd.self) { group in
            var pending = items.makeIterator()
            for _ in 0..<jobs {
                guard let item = pending.next() else { break }
                group.addTask { await runItem(item) }
            }
            for await end in group {
                outcome.add(end.result, skipped: end.skipped)
                if !Task.isCancelled, let item = pending.next() {
                    group.addTask { await runItem(item) }
                }
            }
            return pending.next() != nil
        }
    }

    /// Resumes an item of a shared batch that a worker claimed from the queue: its stages run from their
    /// checkpoints and the ledger records how it ended, as a run does for each of its items. The item stops
    /// when the task is cancelled or ``cancelRunning(_:)`` names it. The result is the item's with `digest`,
    /// the workflow's (and its metadata's) as the batch was submitted. With `refusal`, no stage runs: the item
    /// fails with it (as the batch gives it up), recorded and announced as any failure.
    public func resume(_ item: LedgerItem, digest: String, refusal: StageFailure? = nil) async -> ItemResult {
        await runItem(ItemToRun(resuming: item, digest: digest, refusal: refusal)).result
    }
}
