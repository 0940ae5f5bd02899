import Foundation
import Logging
import StageKit

/// An item `pipeline cancel` stopped and undid.
struct CancelledByRequest: Error {}

extension Runner {
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
            sink.emit(LogLine(level: .error, item: nil, stage: nil, message: error.message))
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
                    level: .notice, item: nil, stage: nil,
                    message: "pipeline cancel: stopping \(stopped.count) running item(s) and undoing them"))
        }
    }

    /// Stops items this runner is processing (a cancel asked for elsewhere): each stops at its next checkpoint
    /// and runs its `onCancel` stages. Items that are not running are left alone.
    public func cancelRunning(_ items: Set<Int64>) {
        running.cancelIfRunning(items)
    }

    /// Undoes the items whose cancel was asked for during the run but that the run did not take up.
    func undoLeftoverRequests() async -> [ItemEnd] {
        guard let requested = try? await store.cancelRequests(workflow: workflow.name), !requested.isEmpty,
            let items = try? await store.snapshot(workflow: workflow.name).items.filter({ requested.contains($0.id) })
        else { return [] }
        var results: [ItemEnd] = []
        for item in items {
            results.append(await undoLeftover(item))
        }
        return results
    }

    /// Undoes one item a cancel request names, reporting it as an item of the run.
    private func undoLeftover(_ item: LedgerItem) async -> ItemEnd {
        var result = ItemResult(
            ref: item.current, fingerprint: item.fingerprint, path: item.input.path, outcome: .skipped,
            reason: SkipReason.cancelledByRequest.description)
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
        return (result, result.outcome == .skipped ? .cancelledByRequest : nil)
    }

    /// Undoes an item of the ledger that a cancel request names, before this run started it.
    @discardableResult
    func undoFromLedger(_ item: LedgerItem) async throws -> Int {
        try await undo(
            item, checkpoints: try await store.checkpoints(workflow: workflow.name, items: [item.id])[item.id] ?? [:])
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

    /// Runs the workflow's `onCancel` stages for one item, with the outputs of its finished stages in `scope`,
    /// and marks it cancelled; returns how many stages ran. When that fails, a cancel request for the item is
    /// answered anyway, so that a waiting `pipeline cancel` stops and reports the failure.
    func undo(input: InputItem, ref: ItemVersion, scope: EvaluationScope) async throws -> Int {
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
        for stage in onCancelStages {
            let spec = stage.spec
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
                    StageFailure("cannot undo: \(redactor.redact("\(error)"))", kind: .invalidOptions))
            }
            let journal = StageJournal(
                record: StageRecord(stage: spec.id, uses: spec.uses, status: .running, optionsHash: ""),
                store: store, item: ref, redactor: redactor)
            scope.stageOutputs[spec.id] = try await attempt(
                stage, input: input, ref: ref, options: options.value, previousOutputs: nil, journal: journal)
            ran += 1
        }
        return ran
    }
}
