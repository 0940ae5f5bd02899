import Foundation
import Logging
import StageKit
import StageRuntime

/// A stage of the workflow with its stage type, looked up once when the runner is made.
struct ResolvedStage: Sendable {
    /// The stage as the workflow declares it.
    let spec: StageSpec
    /// Its stage type.
    let descriptor: StageDescriptor
    /// The ids of the stages it waits for.
    let after: [String]

    /// The stage with its type from `registry`. The loader refuses a workflow whose stage types are not
    /// registered; a workflow built by hand with one fails that stage when it runs.
    init(_ spec: StageSpec, registry: StageRegistry, after: [String] = []) {
        self.spec = spec
        self.descriptor =
            registry.descriptor(for: spec.uses)
            ?? Self.unknown(spec.uses, message: registry.unknownTypeMessage(spec.uses))
        self.after = after
    }

    private static func unknown(_ uses: String, message: String) -> StageDescriptor {
        StageDescriptor(
            stageType: uses, summary: "", optionSchema: OptionSchema([]), outputSchema: OutputSchema([]),
            source: .compiledIn, resource: .light, readsMediaInput: false, retriesItself: false,
            outputs: { _ in OutputSchema([]) },
            run: { _, _ in throw StageFailure(message, kind: .invalidOptions) })
    }
}

extension Runner {
    /// Decides what happens to one stage of an item and carries it out: skip it, reuse its checkpoint, or run
    /// it (dropping the checkpoints of the stages that wait for it first, unless it makes files it made before
    /// again).
    func runStage(
        _ stage: ResolvedStage, index: Int, progress: inout ItemProgress, stream: ExportStream? = nil
    ) async throws {
        let spec = stage.spec
        let label = progress.input.relativePath
        let record = progress.records[spec.id]
        let later = graph.dependents(of: index).map { stages[$0].spec.id }.filter { progress.records[$0] != nil }
        let (decision, hash): (StageDecisions.Decision, String)
        do {
            (decision, hash) = try decisions.decide(
                spec, record: record, scope: progress.scope, invalidated: progress.invalidated.contains(spec.id))
        } catch let failure as ItemFailure {
            sink.emit(StageFinished(item: label, stage: spec.id, outcome: .failed, seconds: 0, error: failure.report))
            throw failure
        }
        let options: ResolvedValue
        let regenerating: [String: String]?
        switch decision {
        case .skip(let reason):
            try await skip(spec, reason: reason, record: record, later: later, progress: &progress)
            return
        case .reuse(let outputs, _):
            progress.scope.stageOutputs[spec.id] = outputs
            progress.stagesReused += 1
            sink.emit(StageFinished(item: label, stage: spec.id, outcome: .reused, seconds: 0))
            return
        case .run(_, let resolved):
            (options, regenerating) = (resolved, nil)
        case .regenerate(let reason, let resolved):
            (options, regenerating) = (resolved, record?.files)
            sink.emit(
                LogLine(level: .notice, item: label, stage: spec.id, message: "\(reason): running it again"))
        }
        try await claimDestinations(of: stage, options: options, progress: progress)
        // A secret stage (a token) runs whenever it is needed; that does not make later stages stale. Nor does
        // one that makes files it made before again, unless they come out different.
        if !spec.isSecret, regenerating == nil {
            try await invalidate(later, progress: &progress)
        }
        let journal = StageJournal(
            record: startingRecord(spec, options: options, hash: hash, record: record, regenerating: regenerating),
            store: store, item: progress.ref, redactor: redactor)
        try await execute(
            stage, options: options, journal: journal, regenerating: regenerating, later: later, progress: &progress,
            stream: stream)
    }

    /// Claims the files the stage writes at paths the workflow chose, as its options name them now (an earlier
    /// stage's output among them), besides those the item claimed when it was admitted: a file another item claims
    /// fails the item with ``ErrorKind/outputCollision`` before the stage writes anything.
    private func claimDestinations(of stage: ResolvedStage, options: ResolvedValue, progress: ItemProgress)
        async throws
    {
        let paths = OutputPath.destinations(of: stage.descriptor, options: options.value).subtracting(progress.claimed)
        guard let taken = try await store.claimOutputs(paths.sorted(), for: progress.ref, workflow: workflow.name)
        else { return }
        throw fail(stage.spec, label: progress.input.relativePath, OutputCollision(taken).failure)
    }

    /// Records a stage whose `if` is false as skipped, with the condition as its reason (for `status` and
    /// `--report`); the stages that wait for it run again when it did not skip by its `if` last time.
    private func skip(
        _ spec: StageSpec, reason: String, record: StageRecord?, later: [String], progress: inout ItemProgress
    ) async throws {
        let standing = !progress.invalidated.contains(spec.id) && record?.isConditionSkip == true
        if !standing { try await invalidate(later, progress: &progress) }
        if !standing || record?.reason != reason {
            var skipped = StageRecord(stage: spec.id, uses: spec.uses, status: .skipped, optionsHash: "")
            skipped.reason = reason
            skipped.finishedAt = Date()
            try await store.save(skipped, for: progress.ref)
            progress.records[spec.id] = skipped
        }
        progress.scope.stageOutputs[spec.id] = .null
        sink.emit(
            StageFinished(
                item: progress.input.relativePath, stage: spec.id, outcome: .skipped, seconds: 0, reason: reason))
    }

    /// The record a stage starts with: an unfinished attempt with the same options (or a regeneration) keeps
    /// its resume data, intents and attempt count.
    private func startingRecord(
        _ spec: StageSpec, options: ResolvedValue, hash: String, record: StageRecord?, regenerating: [String: String]?
    ) -> StageRecord {
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
        return initial
    }

    /// Runs a stage that is not up to date. When its credentials expire, its `refreshWith` stage renews them
    /// (three times at most without checkpointed progress in between) and it runs again with its options
    /// resolved anew.
    private func execute(
        _ stage: ResolvedStage, options: ResolvedValue, journal: StageJournal, regenerating: [String: String]?,
        later: [String], progress: inout ItemProgress, stream: ExportStream?
    ) async throws {
        let spec = stage.spec
        var options = options
        var refreshes = 0
        var resumeAtRefresh = await journal.current.resume
        while true {
            do {
                let ref = progress.ref
                let outputs = try await attempt(
                    stage, input: progress.input, ref: ref, options: options.value,
                    previousOutputs: progress.scope.previous[spec.id], journal: journal, stream: stream
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
                    progress.invalidated.formUnion(later)
                }
                return
            } catch let expired as CredentialsExpired {
                // Three renewals without progress in between give up; a stage that checkpointed progress since
                // the last one (an upload outliving several credentials) starts the count again.
                let resume = await journal.current.resume
                if resume != resumeAtRefresh {
                    refreshes = 0
                    resumeAtRefresh = resume
                }
                guard let refresher = stages.first(where: { $0.spec.id == spec.refreshWith }), refreshes < 3 else {
                    throw ItemFailure(report: expired.report)
                }
                refreshes += 1
                sink.emit(
                    LogLine(
                        level: .notice, item: progress.input.relativePath, stage: spec.id,
                        message: "credentials expired; renewing them with stage \(refresher.spec.id), then continuing"))
                try await renew(refresher, progress: &progress)
                let (renewed, hash) = try decisions.resolveOptions(spec, scope: progress.scope)
                options = renewed
                try await journal.update { $0.optionsHash = hash }
            }
        }
    }

    /// Drops the checkpoints of `stages` (those that wait for one that runs again): they run again too.
    private func invalidate(_ stages: [String], progress: inout ItemProgress) async throws {
        try await store.removeStages(stages, for: progress.ref)
        for id in stages { progress.records[id] = nil }
        progress.invalidated.formUnion(stages)
    }

    /// Runs a `refreshWith` stage again (its success notwithstanding) and puts its new outputs in scope. It
    /// keeps its resume data and intents, so a stage that owns a remote object (`aliyun.vod.ticket`) renews the
    /// credential of the object it made rather than making another.
    private func renew(_ stage: ResolvedStage, progress: inout ItemProgress) async throws {
        let spec = stage.spec
        let (options, hash) = try decisions.resolveOptions(spec, scope: progress.scope)
        var record = StageRecord(stage: spec.id, uses: spec.uses, status: .running, optionsHash: hash)
        if let last = progress.records[spec.id], last.optionsHash == hash {
            record.resume = last.resume
            record.intents = last.intents
        }
        let journal = StageJournal(record: record, store: store, item: progress.ref, redactor: redactor)
        progress.scope.stageOutputs[spec.id] = try await attempt(
            stage, input: progress.input, ref: progress.ref, options: options.value,
            previousOutputs: progress.scope.previous[spec.id], journal: journal)
        progress.records[spec.id] = await journal.current
    }
}
