import Crypto
public import Foundation
public import Logging
import NIOConcurrencyHelpers
public import StageKit

/// Runs a workflow's stages over the items of a ``BatchPlan``, checkpointing every step in a ``StateStore``
/// so that a rerun continues where a crash or a signal stopped it.
///
/// Items run independently (up to `jobs` at a time) and one failing item never stops the others. Within an
/// item, stages run in order; a stage whose checkpoint says it succeeded with the same resolved options is
/// not run again, and when a stage does run, the checkpoints of the stages after it are dropped first, so
/// they run again too.
public struct Runner: Sendable {
    /// The workflow to run.
    public var workflow: Workflow
    /// The stage types.
    public var registry: StageRegistry
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
    public let resourceLimits: ResourceLimits
    private let slots: ResourceSlots
    private let running = RunningItems()
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

    /// Creates a runner.
    public init(
        workflow: Workflow, registry: StageRegistry, store: any StateStore, redactor: SecretRedactor = .none,
        scratchRoot: URL, environment: [String: String], jobs: Int = 1,
        resourceLimits: ResourceLimits = ResourceLimits(),
        services: ServiceValues = ServiceValues(), logLevel: Logger.Level = .info, sink: any RunEventSink
    ) {
        self.workflow = workflow
        self.registry = registry
        self.store = store
        self.redactor = redactor
        self.scratchRoot = scratchRoot
        self.environment = environment
        self.jobs = max(1, jobs)
        self.resourceLimits = resourceLimits
        self.slots = ResourceSlots(resourceLimits)
        self.services = services
        self.logLevel = logLevel
        self.sink = sink
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
            RunRecord(workflow: workflow.name, file: file, stages: workflow.stages.map(\.id)),
            caching: plan.cacheEntries, sightings: plan.sightings)
        sink.emit(RunStarted(workflow: workflow.name, items: plan.items.count, stages: workflow.stages.count))
        running.run(started: true)
        await applyCancelRequests()
        var outcome = RunOutcome(summary: RunSummary(items: plan.items.count + plan.passedOver.count), results: [])
        outcome.keepsEveryResult = keepsEveryResult
        if keepsEveryResult { outcome.results.reserveCapacity(plan.items.count + plan.passedOver.count) }
        for passed in plan.passedOver {
            outcome.add(
                ItemResult(ref: nil, fingerprint: nil, path: passed.path, outcome: .skipped, reason: passed.reason))
        }
        for planned in plan.items {
            let result: ItemResult
            switch planned.action {
            case .run: continue
            case .reuse(let ref, let reason):
                result = ItemResult(
                    ref: ref, fingerprint: planned.fingerprint, path: planned.input.path, outcome: .reused,
                    reason: reason, bytes: planned.input.size)
            case .skip(let reason):
                result = ItemResult(
                    ref: planned.known?.current, fingerprint: planned.fingerprint, path: planned.input.path,
                    outcome: .skipped, reason: reason, bytes: planned.input.size)
            }
            sink.emit(ItemFinished(item: planned.input.relativePath, outcome: result.outcome, reason: result.reason))
            outcome.add(result)
        }
        await withTaskGroup(of: ItemResult.self) { group in
            var pending = plan.items.lazy.filter { $0.admission != nil }.makeIterator()
            for _ in 0..<jobs {
                guard let item = pending.next() else { break }
                group.addTask { await runItem(item) }
            }
            for await result in group {
                outcome.add(result)
                if !Task.isCancelled, let item = pending.next() {
                    group.addTask { await runItem(item) }
                }
            }
        }
        running.run(started: false)
        if !Task.isCancelled {
            for result in await undoLeftoverRequests() { outcome.add(result) }
        }
        outcome.summary.interrupted = outcome.summary.interrupted || Task.isCancelled
        outcome.summary.seconds = (clock.now - start).seconds
        try? await store.finishRun(runID, summary: outcome.summary)
        sink.emit(RunFinished(summary: outcome.summary))
        return outcome
    }

    /// Undoes the remote side effects of finished work for `items` with the workflow's `onCancel` stages
    /// (delete the video, terminate the upload), then marks them cancelled: later runs leave them alone
    /// until `--reprocess`. An onCancel stage whose `if` is false is skipped (give it one such as
    /// `${ticket.uri ?? ''}` when the ticket may never have been created); one whose `if` or options cannot
    /// be evaluated fails the item's undo, which then is not cancelled.
    public func cancel(items: [LedgerItem]) async -> RunSummary {
        let clock = ContinuousClock()
        let start = clock.now
        sink.emit(RunStarted(workflow: workflow.name, items: items.count, stages: workflow.onCancel.count))
        var summary = RunSummary(items: items.count)
        let checkpoints: [Int64: [String: StageRecord]]
        do {
            checkpoints = try await store.checkpoints(workflow: workflow.name, items: Set(items.map(\.id)))
        } catch {
            summary.failed = items.count
            sink.emit(LogLine(level: "error", item: nil, stage: nil, message: error.message))
            return summary
        }
        for item in items {
            guard !Task.isCancelled else {
                summary.interrupted = true
                break
            }
            let label = item.input.relativePath
            sink.emit(ItemStarted(item: label))
            do {
                summary.stagesRun += try await undo(item, checkpoints: checkpoints[item.id] ?? [:])
                summary.succeeded += 1
                sink.emit(ItemFinished(item: label, outcome: .done))
            } catch is CancellationError {
                summary.interrupted = true
                sink.emit(ItemFinished(item: label, outcome: .interrupted))
            } catch {
                summary.failed += 1
                sink.emit(ItemFinished(item: label, outcome: .failed, error: report(error)))
            }
        }
        summary.seconds = (clock.now - start).seconds
        sink.emit(RunFinished(summary: summary))
        return summary
    }

    /// Runs the workflow's `onCancel` stages for an item that is not running, with the outputs of its finished
    /// stages from the ledger.
    private func undo(_ item: LedgerItem, checkpoints: [String: StageRecord]) async throws -> Int {
        var scope = try decisions.scope(for: item.input, previous: [:])
        for spec in workflow.stages {
            if let record = checkpoints[spec.id], record.status == .succeeded {
                scope.stageOutputs[spec.id] = record.outputs.map(redactor.reveal) ?? .null
            }
        }
        return try await undo(input: item.input, ref: item.current, scope: scope)
    }

    /// Undoes an item of the ledger that a cancel request names, before this run started it.
    @discardableResult
    private func undoFromLedger(_ item: LedgerItem) async throws -> Int {
        try await undo(
            item, checkpoints: try await store.checkpoints(workflow: workflow.name, items: [item.id])[item.id] ?? [:])
    }

    /// Runs the workflow's `onCancel` stages for one item, with the outputs of its finished stages in `scope`,
    /// and marks it cancelled; returns how many stages ran. When that fails, a cancel request for the item is
    /// answered anyway, so that a waiting `pipeline cancel` stops and reports the failure.
    private func undo(input: InputItem, ref: ItemVersion, scope: EvaluationScope) async throws -> Int {
        do {
            let ran = try await runOnCancelStages(input: input, ref: ref, scope: scope)
            try await store.setStatus(.cancelled, of: [ref.item])
            return ran
        } catch {
            try? await store.answerCancelRequests(for: [ref.item])
            throw error
        }
    }

    /// The `onCancel` stages of one item; a stage whose `if` is false is skipped, one whose `if` or options
    /// cannot be evaluated fails.
    private func runOnCancelStages(input: InputItem, ref: ItemVersion, scope: EvaluationScope) async throws -> Int {
        let label = input.relativePath
        var scope = scope
        var ran = 0
        for spec in workflow.onCancel {
            guard let descriptor = registry.descriptor(for: spec.uses) else {
                throw fail(spec, label: label, StageFailure("unknown stage type \(spec.uses)", kind: .invalidOptions))
            }
            let options: ResolvedValue
            do {
                if let condition = spec.condition, !(try decisions.evaluate(condition, spec: spec, scope: scope)) {
                    sink.emit(
                        StageFinished(
                            item: label, stage: spec.id, outcome: .skipped, seconds: 0,
                            reason: "nothing to undo: its if condition is false"))
                    continue
                }
                options = try scope.resolve(spec.with, at: spec.path.appending("with"))
            } catch {
                throw fail(
                    spec, label: label,
                    StageFailure(
                        "cannot undo: \(redactor.redact("\(error)"))", kind: .invalidOptions))
            }
            let journal = StageJournal(
                record: StageRecord(stage: spec.id, uses: spec.uses, status: .running, optionsHash: ""),
                store: store, item: ref, redactor: redactor)
            scope.stageOutputs[spec.id] = try await attempt(
                descriptor: descriptor, spec: spec, input: input, ref: ref, options: options.value,
                previousOutputs: nil, journal: journal)
            ran += 1
        }
        return ran
    }

    /// Cancels the items `pipeline cancel` asked for while this runner holds the store: those running stop
    /// at their next checkpoint and run their `onCancel` stages; those not started yet are not started; the
    /// others are undone when the run ends, or at once when no run is under way (a `pipeline watch` waiting
    /// for files). Call it when another process signals a request (the command line listens for SIGUSR1).
    public func applyCancelRequests() async {
        guard let requested = try? await store.cancelRequests(workflow: workflow.name), !requested.isEmpty else {
            return
        }
        if running.isIdle {
            _ = await undoLeftoverRequests()
            return
        }
        let stopped = running.cancel(requested)
        if !stopped.isEmpty {
            sink.emit(
                LogLine(
                    level: "notice", item: nil, stage: nil,
                    message: "pipeline cancel: stopping \(stopped.count) running item(s) and undoing them"))
        }
    }

    /// Undoes the items whose cancel was asked for during the run but that the run did not take up.
    private func undoLeftoverRequests() async -> [ItemResult] {
        guard let requested = try? await store.cancelRequests(workflow: workflow.name), !requested.isEmpty,
            let items = try? await store.snapshot(workflow: workflow.name).items.filter({ requested.contains($0.id) })
        else { return [] }
        var results: [ItemResult] = []
        for item in items {
            var result = ItemResult(
                ref: item.current, fingerprint: item.fingerprint, path: item.input.path, outcome: .skipped,
                reason: "cancelled by pipeline cancel")
            sink.emit(ItemStarted(item: item.input.relativePath))
            do {
                result.stagesRun = try await undoFromLedger(item)
            } catch {
                let failure = report(error)
                (result.outcome, result.reason, result.errorKind) = (.failed, failure.message, failure.kind)
            }
            sink.emit(
                ItemFinished(
                    item: item.input.relativePath, outcome: result.outcome, reason: result.reason,
                    error: result.outcome == .failed
                        ? FailureReport(message: result.reason ?? "", kind: result.errorKind ?? .failed) : nil))
            results.append(result)
        }
        return results
    }

    /// Runs one item's stages (a worker's item, taken from a shared queue) and records how it ended, as a run
    /// does for each of its items; the item stops when the task is cancelled or ``cancelRunning(_:)`` names it.
    public func process(_ item: PlannedItem) async -> ItemResult {
        await runItem(item)
    }

    /// Stops items this runner is processing (a cancel asked for elsewhere): each stops at its next checkpoint
    /// and runs its `onCancel` stages. Items not started yet are undone when they start.
    public func cancelRunning(_ items: Set<Int64>) {
        _ = running.cancel(items)
    }

    // MARK: Items

    /// A stage's credentials expired: renew them with its `refreshWith` stage, or fail the item.
    private struct CredentialsExpired: Error {
        var report: FailureReport
    }

    /// An item `pipeline cancel` stopped and undid.
    private struct CancelledByRequest: Error {}

    /// What one item's stages have done so far, and what is known of them.
    private struct ItemProgress: Sendable {
        var ref: ItemVersion
        var input: InputItem
        var records: [String: StageRecord]
        var scope = EvaluationScope()
        var invalidated = false
        var stagesRun = 0
        var stagesReused = 0
    }

    private func runItem(_ planned: PlannedItem) async -> ItemResult {
        let label = planned.input.relativePath
        let clock = ContinuousClock()
        let started = clock.now
        guard case .run(let reason) = planned.action, let admission = planned.admission else {
            return ItemResult(ref: nil, fingerprint: planned.fingerprint, path: planned.input.path, outcome: .skipped)
        }
        var result = ItemResult(
            ref: nil, fingerprint: planned.fingerprint, path: planned.input.path, outcome: .done,
            reason: reason.description, bytes: planned.input.size)
        sink.emit(ItemStarted(item: label))
        var landed: String?
        do {
            if let known = planned.known, running.isRequested(known.id) {
                result.ref = known.current
                try await undoFromLedger(known)
                throw CancelledByRequest()
            }
            let admitted = try await store.admit(admission, workflow: workflow.name)
            result.ref = admitted.ref
            var initial = ItemProgress(
                ref: admitted.ref, input: planned.input, records: admitted.stages.mapValues(revealed))
            initial.scope = try decisions.scope(
                for: planned.input, previous: admitted.previousOutputs.mapValues(redactor.reveal))
            // The stages run in a task of their own, which `pipeline cancel` from another process can stop.
            let work = Task { () -> (ItemProgress, (any Error)?) in
                var progress = initial
                do {
                    for (index, spec) in workflow.stages.enumerated() {
                        try Task.checkCancellation()
                        try await runStage(index: index, spec: spec, progress: &progress)
                    }
                    return (progress, nil)
                } catch {
                    return (progress, error)
                }
            }
            let item = admitted.ref.item
            running.start(item) { work.cancel() }
            let (progress, failure) = await withTaskCancellationHandler {
                await work.value
            } onCancel: {
                work.cancel()
            }
            running.finish(item)
            result.stagesRun = progress.stagesRun
            result.stagesReused = progress.stagesReused
            if let failure {
                guard running.isRequested(item), !Task.isCancelled else { throw failure }
                _ = try await undo(input: planned.input, ref: admitted.ref, scope: progress.scope)
                throw CancelledByRequest()
            }
            landed = Self.landing(of: progress.scope)
        } catch is CancelledByRequest {
            result.outcome = .skipped
            result.reason = "cancelled by pipeline cancel"
        } catch is CancellationError {
            result.outcome = .interrupted
        } catch {
            let failure = report(error)
            result.outcome = .failed
            result.reason = failure.message
            result.errorKind = failure.kind
        }
        result.seconds = (clock.now - started).seconds
        if let ref = result.ref {
            running.settle(ref.item)
            do {
                try await store.finish(ref, result: result, digest: result.outcome == .done ? planned.digest : nil)
            } catch {
                result.outcome = .failed
                result.reason = error.message
                result.errorKind = .state
            }
        }
        let error =
            result.outcome == .failed
            ? FailureReport(message: result.reason ?? "failed", kind: result.errorKind ?? .failed) : nil
        sink.emit(
            ItemFinished(
                item: label, outcome: result.outcome, reason: result.outcome == .skipped ? result.reason : nil,
                error: error, landed: landed))
        return result
    }

    /// A stored record with its secrets put back.
    private func revealed(_ record: StageRecord) -> StageRecord {
        var record = record
        record.outputs = record.outputs.map(redactor.reveal)
        record.resume = record.resume.map(redactor.reveal)
        return record
    }

    /// Where an item's result landed: the first of `link`, `url`, `location`, `path` in the outputs of its
    /// last stage that has one.
    private static func landing(of scope: EvaluationScope) -> String? {
        for id in scope.stageOrder.reversed() {
            guard let outputs = scope.stageOutputs[id]?.objectValue else { continue }
            for key in ["link", "url", "location", "path"] {
                if let value = outputs[key]?.stringValue, !value.isEmpty { return value }
            }
        }
        return nil
    }

    // MARK: Stages

    private func runStage(index: Int, spec: StageSpec, progress: inout ItemProgress) async throws {
        let label = progress.input.relativePath
        let record = progress.records[spec.id]
        let later = workflow.stages[(index + 1)...].map(\.id).filter { progress.records[$0] != nil }
        let (decision, resolved, initialHash): (StageDecisions.Decision, ResolvedValue?, String)
        do {
            (decision, resolved, initialHash) = try decisions.decide(
                spec, record: record, scope: progress.scope, invalidated: progress.invalidated)
        } catch let failure as ItemFailure {
            sink.emit(StageFinished(item: label, stage: spec.id, outcome: .failed, seconds: 0, error: failure.report))
            throw failure
        }
        switch decision {
        case .skip(let reason):
            if progress.invalidated || record?.status != .skipped {
                try await invalidate(later, progress: &progress)
                var skipped = StageRecord(stage: spec.id, uses: spec.uses, status: .skipped, optionsHash: "")
                skipped.finishedAt = Date()
                try await store.save(skipped, for: progress.ref)
                progress.records[spec.id] = skipped
            }
            progress.scope.stageOutputs[spec.id] = .null
            sink.emit(StageFinished(item: label, stage: spec.id, outcome: .skipped, seconds: 0, reason: reason))
            return
        case .reuse(let outputs):
            progress.scope.stageOutputs[spec.id] = outputs
            progress.stagesReused += 1
            sink.emit(StageFinished(item: label, stage: spec.id, outcome: .reused, seconds: 0))
            return
        case .run:
            break
        case .regenerate(let reason):
            sink.emit(
                LogLine(level: "notice", item: label, stage: spec.id, message: "\(reason): running it again"))
        }
        guard var options = resolved, let descriptor = registry.descriptor(for: spec.uses) else {
            throw fail(spec, label: label, StageFailure("unknown stage type \(spec.uses)", kind: .invalidOptions))
        }
        var hash = initialHash
        // A secret stage (a token) runs whenever it is needed; that does not make later stages stale. Nor does
        // one that makes files it made before again, unless they come out different.
        let regenerating: [String: String]? =
            if case .regenerate = decision { record?.files } else { nil }
        if !spec.isSecret, regenerating == nil {
            try await invalidate(later, progress: &progress)
        }
        var initial = StageRecord(stage: spec.id, uses: spec.uses, status: .running, optionsHash: hash)
        initial.options = spec.isSecret ? nil : redactor.redact(options.redacted)
        if let record, record.optionsHash == hash, record.status != .succeeded || regenerating != nil {
            initial.resume = record.resume
            initial.intents = record.intents
            initial.attempts = record.attempts
        }
        // Until it succeeds, the record keeps the files it is making again: an interrupted regeneration is
        // taken up as one, and the stages after it still stand.
        initial.files = regenerating
        if regenerating != nil { initial.outputs = record?.outputs }
        let journal = StageJournal(record: initial, store: store, item: progress.ref, redactor: redactor)
        var refreshes = 0
        while true {
            do {
                let ref = progress.ref
                let outputs = try await attempt(
                    descriptor: descriptor, spec: spec, input: progress.input, ref: ref, options: options.value,
                    previousOutputs: progress.scope.previous[spec.id], journal: journal
                ) { files in
                    // Different files: the later stages' checkpoints go before this one says it succeeded.
                    guard let regenerating, regenerating != files else { return }
                    try await store.removeStages(later, for: ref)
                }
                progress.scope.stageOutputs[spec.id] = outputs
                let current = await journal.current
                progress.records[spec.id] = current
                progress.stagesRun += 1
                if let regenerating, regenerating != current.files {
                    for id in later { progress.records[id] = nil }
                    progress.invalidated = true
                }
                return
            } catch let expired as CredentialsExpired {
                guard let refresher = workflow.stages.first(where: { $0.id == spec.refreshWith }), refreshes < 3 else {
                    throw ItemFailure(report: expired.report)
                }
                refreshes += 1
                sink.emit(
                    LogLine(
                        level: "notice", item: label, stage: spec.id,
                        message: "credentials expired; renewing them with stage \(refresher.id), then continuing"))
                try await renew(refresher, progress: &progress)
                (options, hash) = try decisions.resolveOptions(spec, scope: progress.scope)
                let renewed = hash
                try await journal.update { $0.optionsHash = renewed }
            }
        }
    }

    /// Drops the checkpoints of `stages` (those after one that runs again): they run again too.
    private func invalidate(_ stages: [String], progress: inout ItemProgress) async throws {
        try await store.removeStages(stages, for: progress.ref)
        for id in stages { progress.records[id] = nil }
        progress.invalidated = true
    }

    /// Runs a `refreshWith` stage again (its checkpoint notwithstanding) and puts its new outputs in scope.
    private func renew(_ spec: StageSpec, progress: inout ItemProgress) async throws {
        guard let descriptor = registry.descriptor(for: spec.uses) else {
            throw fail(
                spec, label: progress.input.relativePath,
                StageFailure("unknown stage type \(spec.uses)", kind: .invalidOptions))
        }
        let (options, hash) = try decisions.resolveOptions(spec, scope: progress.scope)
        let journal = StageJournal(
            record: StageRecord(stage: spec.id, uses: spec.uses, status: .running, optionsHash: hash), store: store,
            item: progress.ref, redactor: redactor)
        progress.scope.stageOutputs[spec.id] = try await attempt(
            descriptor: descriptor, spec: spec, input: progress.input, ref: progress.ref, options: options.value,
            previousOutputs: progress.scope.previous[spec.id], journal: journal)
    }

    /// Runs a stage with its retry policy and timeout; returns its outputs. A stage that retries itself runs once
    /// under the policy, and its own retries become the run's retry events.
    private func attempt(
        descriptor: StageDescriptor, spec: StageSpec, input: InputItem, ref: ItemVersion, options: JSONValue,
        previousOutputs: JSONValue?, journal: StageJournal,
        beforeSuccess: ([String: String]?) async throws -> Void = { _ in }
    ) async throws -> JSONValue {
        let label = input.relativePath
        let clock = ContinuousClock()
        let attempts = spec.retry.attempts
        let runs = descriptor.retriesItself ? 1 : attempts
        for attempt in 1...runs {
            var started = clock.now
            do {
                // The attempt starts once its resource has a free slot; waiting is not part of its timeout.
                let outputs = try await slots.withSlot(descriptor.resource) {
                    started = clock.now
                    await journal.note {
                        $0.status = .running
                        $0.attempts += 1
                        $0.startedAt = Date()
                        $0.finishedAt = nil
                    }
                    sink.emit(
                        StageStarted(item: label, stage: spec.id, uses: spec.uses, attempt: attempt, attempts: attempts)
                    )
                    let context = StageContext(
                        stageID: spec.id, stageType: spec.uses, item: input, attempt: attempt,
                        logger: logger(item: label, stage: spec.id),
                        scratchFolder: scratchRoot.appendingPathComponent("\(ref.item)").appendingPathComponent(
                            spec.id),
                        services: services, previousOutputs: previousOutputs,
                        savedCheckpoint: await journal.current.resume, checkpointer: journal,
                        progress: progressReporter(item: label, stage: spec.id), retryPolicy: spec.retry,
                        retrying: { retry in
                            sink.emit(
                                StageRetrying(
                                    item: label, stage: spec.id, attempt: retry.attempt, attempts: attempts,
                                    delay: retry.delay, error: report(retry.error)))
                        })
                    return try await withTimeout(spec.timeout) {
                        try await descriptor.run(options: options, context: context)
                    }
                }
                if spec.isSecret { redactor.add(all: outputs, as: spec.id) }
                let files = spec.isSecret ? nil : OutputFiles.fingerprints(in: outputs)
                try await beforeSuccess(files)
                try await journal.update {
                    $0.status = .succeeded
                    $0.outputs = spec.isSecret ? nil : outputs
                    $0.files = files
                    $0.error = nil
                    $0.errorKind = nil
                    $0.finishedAt = Date()
                }
                sink.emit(
                    StageFinished(
                        item: label, stage: spec.id, outcome: .succeeded, seconds: (clock.now - started).seconds))
                return outputs
            } catch {
                let seconds = (clock.now - started).seconds
                if Task.isCancelled {
                    try await interrupt(journal, spec: spec, label: label, seconds: seconds)
                }
                if error is StateError { throw ItemFailure(report: report(error)) }
                let failure = report(error)
                let disposition = (error as? any ClassifiedError)?.disposition ?? .fatal
                if disposition == .credentialsExpired {
                    try await journal.update { $0.record(failure) }
                    if spec.refreshWith == nil {
                        sink.emit(
                            StageFinished(
                                item: label, stage: spec.id, outcome: .failed, seconds: seconds, error: failure))
                    } else {
                        sink.emit(
                            StageRetrying(
                                item: label, stage: spec.id, attempt: attempt, attempts: attempts, delay: .zero,
                                error: failure))
                    }
                    let advice =
                        spec.refreshWith == nil ? " (give the stage refreshWith: a stage that renews the token)" : ""
                    throw CredentialsExpired(
                        report: failure.prefixed("stage \(spec.id) (\(spec.uses)) failed: ", advice: advice))
                }
                if case .retryable(let minimum) = disposition, attempt < runs {
                    let delay = spec.retry.delay(afterAttempt: attempt, minimum: minimum)
                    try await journal.update { $0.record(failure) }
                    sink.emit(
                        StageRetrying(
                            item: label, stage: spec.id, attempt: attempt, attempts: attempts, delay: delay,
                            error: failure))
                    do {
                        try await Task.sleep(for: delay)
                    } catch {
                        try await interrupt(journal, spec: spec, label: label, seconds: 0)
                    }
                    continue
                }
                try await journal.update {
                    $0.status = .failed
                    $0.record(failure)
                    $0.finishedAt = Date()
                }
                sink.emit(
                    StageFinished(item: label, stage: spec.id, outcome: .failed, seconds: seconds, error: failure))
                let tries = attempt == 1 ? "" : " after \(attempt) attempts"
                throw ItemFailure(report: failure.prefixed("stage \(spec.id) (\(spec.uses)) failed\(tries): "))
            }
        }
        throw ItemFailure(
            report: FailureReport(message: "stage \(spec.id) (\(spec.uses)) made no attempt", kind: .failed))
    }

    /// Marks a stage interrupted (its resume data stays) and ends the item.
    private func interrupt(_ journal: StageJournal, spec: StageSpec, label: String, seconds: Double) async throws
        -> Never
    {
        try? await journal.update {
            $0.status = .interrupted
            $0.finishedAt = Date()
        }
        sink.emit(StageFinished(item: label, stage: spec.id, outcome: .interrupted, seconds: seconds))
        throw CancellationError()
    }

    /// Reports a stage that could not start, and the failure that ends its item.
    private func fail(_ spec: StageSpec, label: String, _ failure: StageFailure) -> ItemFailure {
        let failure = report(failure)
        sink.emit(StageFinished(item: label, stage: spec.id, outcome: .failed, seconds: 0, error: failure))
        return ItemFailure(report: failure.prefixed("stage \(spec.id) (\(spec.uses)) "))
    }

    /// An error as events and state carry it: its message with secrets redacted, and its kind.
    private func report(_ error: any Error) -> FailureReport {
        switch error {
        case let failure as ItemFailure: failure.report
        case let expired as CredentialsExpired: expired.report
        case let state as StateError: FailureReport(message: redactor.redact(state.message), kind: .state)
        case let classified as any ClassifiedError:
            FailureReport(message: redactor.redact(String(describing: classified)), kind: classified.kind)
        default: FailureReport(message: redactor.redact(String(describing: error)), kind: .failed)
        }
    }

    private func logger(item: String, stage: String) -> Logger {
        let sink = self.sink
        let redactor = self.redactor
        let level = logLevel
        return Logger(label: "pipeline.\(stage)") { _ in
            EventLogHandler(sink: sink, redactor: redactor, item: item, stage: stage, logLevel: level)
        }
    }

    /// Forwards progress at most five times a second per stage, and always the final report.
    private func progressReporter(item: String, stage: String) -> @Sendable (StageProgress) -> Void {
        let sink = self.sink
        let last = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
        return { progress in
            let now = ContinuousClock.now
            let due = last.withLockedValue { previous -> Bool in
                let finished = progress.total.map { progress.completed >= $0 } ?? false
                guard finished || previous.map({ now - $0 >= .milliseconds(200) }) ?? true else { return false }
                previous = now
                return true
            }
            if due { sink.emit(StageProgressed(item: item, stage: stage, progress: progress)) }
        }
    }

}

/// Runs `body`, cancelling it and throwing ``StageTimeout`` when it takes longer than `limit`.
func withTimeout<T: Sendable>(_ limit: TimeSpan?, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    guard let limit else { return try await body() }
    return try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit.duration)
            throw StageTimeout(limit: limit)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw CancellationError() }
        return first
    }
}
