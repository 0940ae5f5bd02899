import Foundation
import StageKit
import StageRuntime

/// How one stage's task ended: the item's progress as the stage left it, and the error that stopped it.
private struct StageEnd: Sendable {
    var index: Int
    var progress: ItemProgress
    var error: (any Error)?
}

/// A streaming stage's export ended without a file: the stage is skipped, as if it had waited for it.
private struct FollowedExportEnded: Error {
    var export: Int
}

/// The ``StageRuntime/ExportStream`` a stage's task takes part in.
private enum StreamPart: Sendable {
    /// The stage is an export that streaming stages follow: it publishes its file there.
    case export(ExportStream)
    /// The stage streams the export at this index.
    case follower(export: Int, ExportStream)
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
        let streaming = workflow.streaming
        var exportStreams: [Int: ExportStream] = [:]
        await withTaskGroup(of: StageEnd.self) { group in
            var startedFrom: [Int: ItemProgress] = [:]
            // The one rule of streaming: a stage that streams an export may start once that export has started
            // (its other waits being over); it then waits for the export's first bytes itself.
            func isReady(_ index: Int) -> Bool {
                graph.waits[index].allSatisfy { waited in
                    done.contains(waited) || (streaming.follows[index] == waited && exportStreams[waited] != nil)
                }
            }
            while true {
                if !interrupted, !Task.isCancelled {
                    for index in graph.order where waiting.contains(index) && isReady(index) {
                        waiting.remove(index)
                        startedFrom[index] = progress
                        let role = Self.streamPart(of: index, in: streaming, streams: &exportStreams)
                        group.addTask { [progress, role] in await runStage(at: index, from: progress, role: role) }
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
                if let ended = error as? FollowedExportEnded {
                    // As if the streaming stage had waited for its export to end.
                    do {
                        try await recordSkipped(end.index, because: ended.export, progress: &progress)
                    } catch {
                        failure = failure ?? error
                    }
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

    /// The part stage `index` plays in streaming, as it starts: it follows the stream of the export it streams, or
    /// it is an export that stages follow, whose new stream joins `streams`; nil when it does neither.
    private static func streamPart(of index: Int, in streaming: StreamPlan, streams: inout [Int: ExportStream])
        -> StreamPart?
    {
        if let export = streaming.follows[index], let stream = streams[export] {
            return .follower(export: export, stream)
        }
        guard !streaming.followers(of: index).isEmpty else { return nil }
        let stream = ExportStream()
        streams[index] = stream
        return .export(stream)
    }

    /// Runs one stage on a copy of the item's progress and returns the copy as the stage left it. An export that
    /// streaming stages follow tells its stream how it ended; a streaming stage first waits for its export's first
    /// bytes (or end), and resolves its options with the export's file (the output its type declares), the one
    /// output known before it ends.
    private func runStage(at index: Int, from start: ItemProgress, role: StreamPart?) async -> StageEnd {
        var progress = start
        do {
            try Task.checkCancellation()
            switch role {
            case .export(let stream):
                do {
                    try await runStage(stages[index], index: index, progress: &progress, stream: stream)
                } catch {
                    stream.abandon("stage \(stages[index].spec.id) did not finish")
                    throw error
                }
                // Its file is the output its type declares; the stage said so itself unless its checkpoint was reused.
                let exportID = stages[index].spec.id
                let outputs = progress.scope.stageOutputs[exportID]
                if let path = stages[index].descriptor.landingOutput.flatMap({ outputs?[$0]?.stringValue }) {
                    if let size = try? await BlockingWork.run({
                        try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
                    }) {
                        stream.finish(destination: path, size: Int64(size))
                    } else {
                        // The stage said it wrote a file that is not there (removed since, or never written).
                        stream.abandon("the file of stage \(exportID), \(path), is gone")
                    }
                } else {
                    stream.abandon("stage \(exportID) was skipped")
                }
            case .follower(let export, let stream):
                let snapshot = await stream.started()
                try Task.checkCancellation()
                guard let destination = snapshot.destination, snapshot.failure == nil else {
                    throw FollowedExportEnded(export: export)
                }
                // This branch's progress was copied when the export started: if the export runs again, it has
                // since removed this stage's record from the ledger, and an old success must not be reused (an
                // unfinished upload's record is kept: its parts are checked against the regenerated bytes).
                let followerID = stages[index].spec.id
                let stored = try await store.checkpoints(workflow: workflow.name, items: [progress.ref.item])
                if progress.records[followerID]?.status == .succeeded, stored[progress.ref.item]?[followerID] == nil {
                    progress.records[followerID] = nil
                    progress.invalidated.insert(followerID)
                }
                let exportID = stages[export].spec.id
                if let file = stages[export].descriptor.landingOutput {
                    progress.scope.stageOutputs[exportID] = .object([file: .string(destination)])
                }
                defer { progress.scope.stageOutputs[exportID] = start.scope.stageOutputs[exportID] }
                try await runStage(stages[index], index: index, progress: &progress, stream: stream)
            case nil:
                try await runStage(stages[index], index: index, progress: &progress)
            }
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
        for index in graph.dependents(of: failed) where waiting.contains(index) {
            waiting.remove(index)
            try await recordSkipped(index, because: failed, progress: &progress)
        }
    }

    /// Says that stage `index` is skipped because `failed` failed; a stage with no checkpoint gets one that says
    /// so (for `pipeline status`), one that has a checkpoint keeps it.
    private func recordSkipped(_ index: Int, because failed: Int, progress: inout ItemProgress) async throws {
        let spec = stages[index].spec
        let reason = SkipReason.waitsFor(failed: stages[failed].spec.id)
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
