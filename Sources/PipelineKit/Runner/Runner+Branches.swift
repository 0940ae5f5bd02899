import Foundation
import StageKit

/// How one stage's task ended: the item's progress as the stage left it, and the error that stopped it.
private struct StageEnd: Sendable {
    var index: Int
    var progress: ItemProgress
    var error: (any Error)?
}

extension Runner {
    /// Runs an item's stages, each as soon as the stages it waits for are done, so that branches run side by
    /// side (each attempt still waits for a slot of its resource). A stage that fails fails the item, and the
    /// stages that wait for it are skipped with that reason; the other branches run to the end and keep their
    /// checkpoints, so a rerun runs only what failed and what waits for it. Once the task is cancelled no
    /// stage starts, and the running ones stop at their next checkpoint. Returns the item's progress, with
    /// every finished branch's outputs, and the error that ends the item.
    func runBranches(from initial: ItemProgress) async -> (ItemProgress, (any Error)?) {
        var progress = initial
        var waiting = Set(stages.indices)
        var done: Set<Int> = []
        var failure: (any Error)?
        var interrupted = false
        await withTaskGroup(of: StageEnd.self) { group in
            var startedFrom: [Int: ItemProgress] = [:]
            while true {
                if !interrupted, !Task.isCancelled {
                    for index in graph.order
                    where waiting.contains(index) && graph.waits[index].allSatisfy(done.contains) {
                        waiting.remove(index)
                        startedFrom[index] = progress
                        group.addTask { [progress] in await runStage(at: index, from: progress) }
                    }
                }
                guard let end = await group.next() else { break }
                progress.merge(end.progress, since: startedFrom.removeValue(forKey: end.index) ?? initial)
                guard let error = end.error else {
                    done.insert(end.index)
                    continue
                }
                if error is CancellationError || Task.isCancelled {
                    interrupted = true
                    continue
                }
                failure = failure ?? error
                do {
                    try await skipDependents(of: end.index, waiting: &waiting, progress: &progress)
                } catch {
                    failure = failure ?? error
                }
            }
        }
        return (progress, interrupted || Task.isCancelled ? CancellationError() : failure)
    }

    /// Runs one stage on a copy of the item's progress and returns the copy as the stage left it.
    private func runStage(at index: Int, from start: ItemProgress) async -> StageEnd {
        var progress = start
        do {
            try Task.checkCancellation()
            try await runStage(stages[index], index: index, progress: &progress)
            return StageEnd(index: index, progress: progress, error: nil)
        } catch {
            return StageEnd(index: index, progress: progress, error: error)
        }
    }

    /// Skips the stages still waiting that wait for `failed`, directly or through others, and says why. A
    /// stage with no checkpoint gets one that says it was skipped and why (for `pipeline status`); one that
    /// has a checkpoint keeps it (the failed stage did not get as far as invalidating it).
    private func skipDependents(
        of failed: Int, waiting: inout Set<Int>, progress: inout ItemProgress
    ) async throws {
        let reason = SkipReason.waitsFor(failed: stages[failed].spec.id)
        for index in graph.dependents(of: failed) where waiting.contains(index) {
            waiting.remove(index)
            let spec = stages[index].spec
            if progress.records[spec.id] == nil {
                var skipped = StageRecord(stage: spec.id, uses: spec.uses, status: .skipped, optionsHash: "")
                skipped.reason = reason.description
                skipped.finishedAt = Date()
                try await store.save(skipped, for: progress.ref)
                progress.records[spec.id] = skipped
            }
            sink.emit(
                StageFinished(
                    item: progress.input.relativePath, stage: spec.id, outcome: .skipped, seconds: 0,
                    reason: reason.description, failedDependency: stages[failed].spec.id))
        }
    }
}
