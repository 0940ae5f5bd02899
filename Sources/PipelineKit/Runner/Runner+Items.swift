import Foundation
import StageKit

/// An item whose stages run: one a run's plan takes up, or one a worker claimed from a shared queue.
struct ItemToRun: Sendable {
    /// The file.
    var input: InputItem
    /// Why its stages run.
    var reason: PlannedItem.RunReason
    /// What the run tells the ledger when it takes the item up.
    var admission: ItemAdmission
    /// The ledger's item, when the ledger knows it.
    var known: LedgerItem?
    /// What the item is done with once it succeeds.
    var digest: String
    /// Why FFmpeg cannot read the file its name says is media (``PlannedItem/damage``): the item fails at once.
    var damage: String?
    /// Why a shared batch gives the item up without running it (a takeover limit): the item fails at once, and a
    /// stage its checkpoints say was running fails with it.
    var refusal: StageFailure?
    /// The files it writes at paths the workflow chose, known before its stages run (``PlannedItem/destinations``).
    var destinations: [String] = []
    /// Why it may not write one of them (``PlannedItem/collision``): the item fails at once.
    var collision: OutputCollision?

    /// The item of a plan whose stages run; nil for one the plan reuses or skips.
    init?(_ planned: PlannedItem) {
        guard case .run(let reason) = planned.action, let admission = planned.admission else { return nil }
        self.input = planned.input
        self.reason = reason
        self.admission = admission
        self.known = planned.known
        self.digest = planned.digest
        self.damage = planned.damage
        self.destinations = planned.destinations
        self.collision = planned.collision
    }

    /// A queued item of a shared batch, taken up from its checkpoints.
    init(resuming item: LedgerItem, digest: String, refusal: StageFailure? = nil) {
        let reason = PlannedItem.RunReason.resume(item.status)
        self.input = item.input
        self.reason = reason
        self.admission = ItemAdmission(
            item: item.id, newVersion: reason.newVersion, fingerprint: item.fingerprint, input: item.input)
        self.known = item
        self.digest = digest
        self.refusal = refusal
    }
}

/// What one item's stages have done so far, and what is known of them.
struct ItemProgress: Sendable {
    var ref: ItemVersion
    var input: InputItem
    var records: [String: StageRecord]
    var scope = EvaluationScope()
    /// Stages whose checkpoints were dropped because a stage they wait for runs again.
    var invalidated: Set<String> = []
    var stagesRun = 0
    var stagesReused = 0
    /// The files the item claimed when it was admitted: a stage that writes one of them claims nothing more.
    var claimed: Set<String> = []

    /// Takes in what a branch did, given the progress `start` it set out from: the checkpoints and outputs it
    /// changed, the stages it invalidated, and its counts.
    mutating func merge(_ branch: ItemProgress, since start: ItemProgress) {
        for id in Set(branch.records.keys).union(start.records.keys) where branch.records[id] != start.records[id] {
            records[id] = branch.records[id]
        }
        for (id, outputs) in branch.scope.stageOutputs where start.scope.stageOutputs[id] != outputs {
            scope.stageOutputs[id] = outputs
        }
        invalidated.formUnion(branch.invalidated)
        stagesRun += branch.stagesRun - start.stagesRun
        stagesReused += branch.stagesReused - start.stagesReused
    }
}

/// How an item ended: its result, and why it was skipped when it was.
typealias ItemEnd = (result: ItemResult, skipped: SkipReason?)

extension Runner {
    /// Runs one item's stages and records how it ended; one item's failure is its own.
    func runItem(_ item: ItemToRun) async -> ItemEnd {
        let label = item.input.relativePath
        let clock = ContinuousClock()
        let started = clock.now
        var result = ItemResult(
            ref: nil, fingerprint: item.admission.fingerprint, path: item.input.path, outcome: .done,
            reason: item.reason.description, bytes: item.input.size)
        sink.emit(ItemStarted(item: label))
        var landed: String?
        var skipped: SkipReason?
        do {
            landed = try await runStages(of: item, into: &result)
        } catch is CancelledByRequest {
            skipped = .cancelledByRequest
            result.outcome = .skipped
            result.reason = SkipReason.cancelledByRequest.description
        } catch is CancellationError {
            result.outcome = .interrupted
        } catch let error as StateError where error.code == .leaseLost {
            // A worker that lost its lease did not fail the item: whichever worker claims it next resumes it.
            result.outcome = .interrupted
            result.reason = error.message
        } catch {
            let failure = report(error)
            result.outcome = .failed
            result.reason = failure.message
            result.errorKind = failure.kind
        }
        result.seconds = (clock.now - started).seconds
        await finish(item, result: &result)
        let error =
            result.outcome == .failed
            ? FailureReport(message: result.reason ?? "failed", kind: result.errorKind ?? .failed) : nil
        sink.emit(
            ItemFinished(
                item: label, outcome: result.outcome, reason: result.outcome == .skipped ? result.reason : nil,
                error: error, landed: landed))
        return (result, result.outcome == .skipped ? skipped : nil)
    }

    /// Admits an item and runs its stages (or undoes it, when `pipeline cancel` asked for it); returns where
    /// its result landed.
    private func runStages(of item: ItemToRun, into result: inout ItemResult) async throws -> String? {
        if let known = item.known, running.isRequested(known.id) {
            result.ref = known.current
            try await undoFromLedger(known)
            throw CancelledByRequest()
        }
        let admitted = try await store.admit(item.admission, workflow: workflow.name)
        result.ref = admitted.ref
        if let damage = item.damage { throw StageFailure.damagedInput(damage) }
        if let refusal = item.refusal { try await refuse(admitted, refusal) }
        if let collision = item.collision { throw collision.failure }
        if let taken = try await store.claimOutputs(item.destinations, for: admitted.ref, workflow: workflow.name) {
            throw OutputCollision(taken).failure
        }
        var initial = ItemProgress(ref: admitted.ref, input: item.input, records: admitted.stages.mapValues(revealed))
        initial.claimed = Set(item.destinations)
        initial.scope = try decisions.scope(
            for: item.input, previous: admitted.previousOutputs.mapValues(redactor.reveal))
        let (progress, failure) = await runStages(from: initial)
        result.stagesRun = progress.stagesRun
        result.stagesReused = progress.stagesReused
        if let failure {
            guard running.isRequested(admitted.ref.item), !Task.isCancelled else { throw failure }
            _ = try await undo(input: item.input, ref: admitted.ref, scope: progress.scope)
            throw CancelledByRequest()
        }
        return landing(of: progress.scope)
    }

    /// Fails an item refused without running: the stage its checkpoints say was running (where its worker died)
    /// is recorded failed with the reason, so that no stage of a failed item reads as running.
    private func refuse(_ admitted: AdmittedItem, _ refusal: StageFailure) async throws -> Never {
        for var record in admitted.stages.values where record.status == .running {
            record.status = .failed
            record.error = refusal.message
            record.errorKind = refusal.kind
            try await store.save(record, for: admitted.ref)
        }
        throw refusal
    }

    /// Runs the stages in a task of their own, which `pipeline cancel` from another process can stop; returns
    /// how far they got and the error that stopped them.
    private func runStages(from initial: ItemProgress) async -> (ItemProgress, (any Error)?) {
        let work = Task { await runBranches(from: initial) }
        let item = initial.ref.item
        running.start(item) { work.cancel() }
        let ended = await withTaskCancellationHandler {
            await work.value
        } onCancel: {
            work.cancel()
        }
        running.finish(item)
        return ended
    }

    /// Records how an admitted item ended; an item the ledger cannot record fails, unless the record was refused
    /// because this worker no longer holds the item (then it was interrupted, not failed).
    private func finish(_ item: ItemToRun, result: inout ItemResult) async {
        guard let ref = result.ref else { return }
        running.settle(ref.item)
        do {
            try await store.finish(ref, result: result, digest: result.outcome == .done ? item.digest : nil)
        } catch  where error.code == .leaseLost {
            // The item is another worker's now (or this one let it go): how it ends is for that worker to record.
            result.outcome = .interrupted
            result.reason = error.message
        } catch {
            result.outcome = .failed
            result.reason = error.message
            result.errorKind = .state
        }
    }

    /// A stored record with its secrets put back.
    private func revealed(_ record: StageRecord) -> StageRecord {
        var record = record
        record.outputs = record.outputs.map(redactor.reveal)
        record.resume = record.resume.map(redactor.reveal)
        return record
    }

    /// Where an item's result landed: the output its type declares as such (``StageDescriptor/landingOutput``), of
    /// the last of its stages that gave one.
    private func landing(of scope: EvaluationScope) -> String? {
        for id in scope.stageOrder.reversed() {
            guard let output = stages.first(where: { $0.spec.id == id })?.descriptor.landingOutput,
                let value = scope.stageOutputs[id]?[output]?.stringValue, !value.isEmpty
            else { continue }
            return value
        }
        return nil
    }
}
