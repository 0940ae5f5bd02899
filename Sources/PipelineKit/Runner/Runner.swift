import Crypto
import Foundation
public import Logging
import NIOConcurrencyHelpers
public import StageKit

/// Runs a workflow's stages over input items, checkpointing every step so that a rerun continues where
/// a crash or a signal stopped it.
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
    public var store: CheckpointStore
    /// `env.*`.
    public var environment: [String: String]
    /// Items processed at the same time.
    public var jobs: Int
    /// Shared resources for stages.
    public var services: ServiceValues
    /// The lowest level of stage log lines that are reported.
    public var logLevel: Logger.Level
    /// Receives the run's events.
    public var sink: any RunEventSink

    /// Creates a runner.
    public init(
        workflow: Workflow, registry: StageRegistry, store: CheckpointStore, environment: [String: String],
        jobs: Int = 1, services: ServiceValues = ServiceValues(), logLevel: Logger.Level = .info,
        sink: any RunEventSink
    ) {
        self.workflow = workflow
        self.registry = registry
        self.store = store
        self.environment = environment
        self.jobs = max(1, jobs)
        self.services = services
        self.logLevel = logLevel
        self.sink = sink
    }

    private var runName: String { workflow.name }

    /// Runs every item; returns when all are done, or when the task is cancelled (then running stages are
    /// checkpointed as interrupted and items not started are left for the next run).
    public func run(items: [InputItem]) async -> RunSummary {
        let clock = ContinuousClock()
        let start = clock.now
        sink.emit(RunStarted(workflow: workflow.name, items: items.count, stages: workflow.stages.count))
        var summary = RunSummary(
            items: items.count, succeeded: 0, failed: 0, interrupted: false, stagesRun: 0, stagesReused: 0, seconds: 0)
        await withTaskGroup(of: ItemResult.self) { group in
            var pending = items.makeIterator()
            for _ in 0..<jobs {
                guard let item = pending.next() else { break }
                group.addTask { await runItem(item) }
            }
            for await result in group {
                switch result.state {
                case .succeeded: summary.succeeded += 1
                case .failed: summary.failed += 1
                case .interrupted: summary.interrupted = true
                }
                summary.stagesRun += result.stagesRun
                summary.stagesReused += result.stagesReused
                if !Task.isCancelled, let item = pending.next() {
                    group.addTask { await runItem(item) }
                }
            }
        }
        summary.interrupted = summary.interrupted || Task.isCancelled
        summary.seconds = (clock.now - start).seconds
        sink.emit(RunFinished(summary: summary))
        return summary
    }

    /// Undoes the remote side effects of finished work for `items` with the workflow's `onCancel` stages
    /// (delete the video, terminate the upload), then forgets their state so a later run starts them anew.
    /// An onCancel stage whose references are missing (the ticket was never created) is skipped.
    public func cancel(items: [InputItem]) async -> RunSummary {
        let clock = ContinuousClock()
        let start = clock.now
        sink.emit(RunStarted(workflow: workflow.name, items: items.count, stages: workflow.onCancel.count))
        var summary = RunSummary(
            items: items.count, succeeded: 0, failed: 0, interrupted: false, stagesRun: 0, stagesReused: 0, seconds: 0)
        for item in items {
            guard !Task.isCancelled else {
                summary.interrupted = true
                break
            }
            let key = item.stateKey
            sink.emit(ItemStarted(item: item.relativePath))
            do {
                var scope = EvaluationScope(
                    input: item.facts, vars: try resolveVars(for: item), environment: environment)
                for spec in workflow.stages {
                    if let record = try await store.stage(run: runName, item: key, stage: spec.id),
                        record.status == .succeeded
                    {
                        scope.stageOutputs[spec.id] = record.outputs ?? .null
                    }
                }
                for spec in workflow.onCancel {
                    guard let descriptor = registry.descriptor(for: spec.uses) else {
                        throw fail(
                            spec, item: item, StageFailure("unknown stage type \(spec.uses)", kind: .invalidOptions))
                    }
                    let options: ResolvedValue
                    do {
                        if let condition = spec.condition, !(try evaluate(condition, spec: spec, scope: scope)) {
                            throw SkipStage()
                        }
                        options = try scope.resolve(spec.with, at: spec.path.appending("with"))
                    } catch {
                        sink.emit(
                            StageFinished(
                                item: item.relativePath, stage: spec.id, outcome: .skipped, seconds: 0,
                                reason: "nothing to undo: \(store.redactor.redact("\(error)"))"))
                        continue
                    }
                    let journal = StageJournal(
                        record: StageRecord(stage: spec.id, uses: spec.uses, status: .running, optionsHash: ""),
                        store: store,
                        run: runName, item: key)
                    scope.stageOutputs[spec.id] = try await attempt(
                        descriptor: descriptor, spec: spec, item: item, key: key, options: options.value,
                        journal: journal)
                    summary.stagesRun += 1
                }
                try await store.removeItem(run: runName, item: key)
                summary.succeeded += 1
                sink.emit(ItemFinished(item: item.relativePath, succeeded: true, interrupted: false))
            } catch is CancellationError {
                summary.interrupted = true
                sink.emit(ItemFinished(item: item.relativePath, succeeded: false, interrupted: true))
            } catch {
                summary.failed += 1
                sink.emit(
                    ItemFinished(item: item.relativePath, succeeded: false, interrupted: false, error: report(error)))
            }
        }
        summary.seconds = (clock.now - start).seconds
        sink.emit(RunFinished(summary: summary))
        return summary
    }

    /// An onCancel stage with nothing to undo: its `if` is false.
    private struct SkipStage: Error, CustomStringConvertible {
        var description: String { "its if condition is false" }
    }

    // MARK: Items

    private struct ItemResult: Sendable {
        enum State: Sendable { case succeeded, failed, interrupted }
        var state: State
        var stagesRun = 0
        var stagesReused = 0
    }

    /// A failure that ends an item, already reported.
    private struct ItemFailure: Error {
        var report: FailureReport
    }

    /// A stage's credentials expired: renew them with its `refreshWith` stage, or fail the item.
    private struct CredentialsExpired: Error {
        var report: FailureReport
    }

    private func runItem(_ item: InputItem) async -> ItemResult {
        let key = item.stateKey
        var result = ItemResult(state: .succeeded)
        var scope = EvaluationScope()
        sink.emit(ItemStarted(item: item.relativePath))
        do {
            try await prepareState(of: item, key: key)
            scope = EvaluationScope(
                input: item.facts, vars: try resolveVars(for: item), environment: environment)
            var invalidated = false
            for (index, spec) in workflow.stages.enumerated() {
                try Task.checkCancellation()
                switch try await runStage(
                    index: index, spec: spec, item: item, key: key, scope: &scope, invalidated: &invalidated)
                {
                case .ran: result.stagesRun += 1
                case .reused: result.stagesReused += 1
                case .skipped: break
                }
            }
            sink.emit(
                ItemFinished(
                    item: item.relativePath, succeeded: true, interrupted: false, landed: Self.landing(of: scope)))
        } catch is CancellationError {
            result.state = .interrupted
            sink.emit(ItemFinished(item: item.relativePath, succeeded: false, interrupted: true))
        } catch {
            result.state = .failed
            sink.emit(ItemFinished(item: item.relativePath, succeeded: false, interrupted: false, error: report(error)))
        }
        return result
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

    /// Records the item's input facts; an input that changed since its stages ran starts over.
    private func prepareState(of item: InputItem, key: String) async throws {
        let previous = try await store.item(run: runName, item: key)
        if let previous, previous.input == item { return }
        if let previous, previous.input.size != item.size || previous.input.modified != item.modified {
            sink.emit(
                LogLine(
                    level: "notice", item: item.relativePath, stage: nil,
                    message:
                        "the input changed since its stages ran (size or modification time); all its stages run again"))
            try await store.removeStages(store.stages(run: runName, item: key), run: runName, item: key)
        }
        try await store.save(ItemRecord(input: item), run: runName, item: key)
    }

    /// Resolves `vars` for one item, each var after the vars it references.
    private func resolveVars(for item: InputItem) throws -> [String: ResolvedValue] {
        var resolved: [String: ResolvedValue] = [:]
        func resolve(_ name: String, depth: Int) throws {
            guard resolved[name] == nil, let value = workflow.vars[name], depth < 100 else { return }
            value.forEachString { text in
                for expression in (try? Template(parsing: text))?.expressions ?? [] {
                    for reference in expression.references where reference.root == "vars" {
                        if let member = reference.member { try? resolve(member, depth: depth + 1) }
                    }
                }
            }
            let scope = EvaluationScope(input: item.facts, vars: resolved, environment: environment)
            resolved[name] = try scope.resolve(value, at: JSONPath.root.appending("vars").appending(name))
        }
        for name in workflow.vars.keys.sorted() { try resolve(name, depth: 0) }
        return resolved
    }

    // MARK: Stages

    private enum StageResult { case ran, reused, skipped }

    private func runStage(
        index: Int, spec: StageSpec, item: InputItem, key: String, scope: inout EvaluationScope, invalidated: inout Bool
    ) async throws -> StageResult {
        let label = item.relativePath
        let record = try await store.stage(run: runName, item: key, stage: spec.id)
        let later = workflow.stages[(index + 1)...].map(\.id)

        if let condition = spec.condition, !(try evaluate(condition, spec: spec, scope: scope)) {
            if invalidated || record?.status != .skipped {
                try await store.removeStages(later, run: runName, item: key)
                var skipped = StageRecord(stage: spec.id, uses: spec.uses, status: .skipped, optionsHash: "")
                skipped.finishedAt = Date()
                try await store.save(skipped, run: runName, item: key)
                invalidated = true
            }
            scope.stageOutputs[spec.id] = .null
            sink.emit(
                StageFinished(
                    item: label, stage: spec.id, outcome: .skipped, seconds: 0, reason: "if \(condition) is false"))
            return .skipped
        }

        var (options, hash) = try resolveOptions(spec, item: item, scope: scope)
        if !spec.isSecret, !invalidated, let record, record.status == .succeeded, record.optionsHash == hash,
            let outputs = record.outputs
        {
            scope.stageOutputs[spec.id] = outputs
            sink.emit(StageFinished(item: label, stage: spec.id, outcome: .reused, seconds: 0))
            return .reused
        }
        guard let descriptor = registry.descriptor(for: spec.uses) else {
            throw fail(spec, item: item, StageFailure("unknown stage type \(spec.uses)", kind: .invalidOptions))
        }

        // A secret stage (a token) runs whenever it is needed; that does not make later stages stale.
        if !spec.isSecret {
            try await store.removeStages(later, run: runName, item: key)
            invalidated = true
        }
        var initial = StageRecord(stage: spec.id, uses: spec.uses, status: .running, optionsHash: hash)
        if let record, record.optionsHash == hash, record.status != .succeeded {
            initial.resume = record.resume
            initial.intents = record.intents
            initial.attempts = record.attempts
        }
        let journal = StageJournal(record: initial, store: store, run: runName, item: key)
        var refreshes = 0
        while true {
            do {
                let outputs = try await attempt(
                    descriptor: descriptor, spec: spec, item: item, key: key, options: options.value, journal: journal)
                scope.stageOutputs[spec.id] = outputs
                return .ran
            } catch let expired as CredentialsExpired {
                guard let refresher = workflow.stages.first(where: { $0.id == spec.refreshWith }), refreshes < 3 else {
                    throw ItemFailure(report: expired.report)
                }
                refreshes += 1
                sink.emit(
                    LogLine(
                        level: "notice", item: label, stage: spec.id,
                        message: "credentials expired; renewing them with stage \(refresher.id), then continuing"))
                try await renew(refresher, item: item, key: key, scope: &scope)
                (options, hash) = try resolveOptions(spec, item: item, scope: scope)
                let renewed = hash
                try await journal.update { $0.optionsHash = renewed }
            }
        }
    }

    /// A stage's options resolved against the scope, and the hash that decides whether it is up to date.
    private func resolveOptions(_ spec: StageSpec, item: InputItem, scope: EvaluationScope) throws -> (
        ResolvedValue, String
    ) {
        let options: ResolvedValue
        do {
            options = try scope.resolve(spec.with, at: spec.path.appending("with"))
        } catch {
            throw fail(spec, item: item, StageFailure("cannot resolve its options: \(error)", kind: .invalidOptions))
        }
        // Secrets count as their expressions, also where they arrive through another stage's outputs, so a
        // rotated token reruns nothing.
        return (options, optionsHash(uses: spec.uses, options: store.redactor.redact(options.redacted)))
    }

    /// Runs a `refreshWith` stage again (its checkpoint notwithstanding) and puts its new outputs in scope.
    private func renew(_ spec: StageSpec, item: InputItem, key: String, scope: inout EvaluationScope) async throws {
        guard let descriptor = registry.descriptor(for: spec.uses) else {
            throw fail(spec, item: item, StageFailure("unknown stage type \(spec.uses)", kind: .invalidOptions))
        }
        let (options, hash) = try resolveOptions(spec, item: item, scope: scope)
        let journal = StageJournal(
            record: StageRecord(stage: spec.id, uses: spec.uses, status: .running, optionsHash: hash), store: store,
            run: runName,
            item: key)
        scope.stageOutputs[spec.id] = try await attempt(
            descriptor: descriptor, spec: spec, item: item, key: key, options: options.value, journal: journal)
    }

    /// Runs a stage with its retry policy and timeout; returns its outputs.
    private func attempt(
        descriptor: StageDescriptor, spec: StageSpec, item: InputItem, key: String, options: JSONValue,
        journal: StageJournal
    ) async throws -> JSONValue {
        let label = item.relativePath
        let clock = ContinuousClock()
        let attempts = spec.retry.attempts
        for attempt in 1...attempts {
            let started = clock.now
            try await journal.update {
                $0.status = .running
                $0.attempts += 1
                $0.startedAt = Date()
                $0.finishedAt = nil
            }
            sink.emit(StageStarted(item: label, stage: spec.id, uses: spec.uses, attempt: attempt, attempts: attempts))
            let context = StageContext(
                stageID: spec.id, stageType: spec.uses, item: item, attempt: attempt,
                logger: logger(item: label, stage: spec.id),
                scratchFolder: store.scratchFolder(run: runName, item: key, stage: spec.id), services: services,
                savedCheckpoint: await journal.current.resume, checkpointer: journal,
                progress: progressReporter(item: label, stage: spec.id))
            do {
                let outputs = try await withTimeout(spec.timeout) {
                    try await descriptor.run(options: options, context: context)
                }
                if spec.isSecret { store.redactor.add(all: outputs, as: spec.id) }
                try await journal.update {
                    $0.status = .succeeded
                    $0.outputs = spec.isSecret ? nil : outputs
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
                if case .retryable(let minimum) = disposition, attempt < attempts {
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

    private func evaluate(_ condition: String, spec: StageSpec, scope: EvaluationScope) throws -> Bool {
        do {
            return try scope.resolve(try Template(parsing: condition), at: spec.path.appending("if")).value.isTruthy
        } catch let error as EvaluationError {
            throw ItemFailure(
                report: FailureReport(
                    message: "stage \(spec.id): cannot evaluate its if condition: \(error)", kind: .invalidOptions))
        }
    }

    /// Reports a stage that could not start, and the failure that ends its item.
    private func fail(_ spec: StageSpec, item: InputItem, _ failure: StageFailure) -> ItemFailure {
        let failure = report(failure)
        sink.emit(StageFinished(item: item.relativePath, stage: spec.id, outcome: .failed, seconds: 0, error: failure))
        return ItemFailure(report: failure.prefixed("stage \(spec.id) (\(spec.uses)) "))
    }

    /// An error as events and state carry it: its message with secrets redacted, and its kind.
    private func report(_ error: any Error) -> FailureReport {
        switch error {
        case let failure as ItemFailure: failure.report
        case let expired as CredentialsExpired: expired.report
        case let state as StateError: FailureReport(message: store.redactor.redact(state.message), kind: .state)
        case let classified as any ClassifiedError:
            FailureReport(message: store.redactor.redact(String(describing: classified)), kind: classified.kind)
        default: FailureReport(message: store.redactor.redact(String(describing: error)), kind: .failed)
        }
    }

    private func logger(item: String, stage: String) -> Logger {
        let sink = self.sink
        let redactor = store.redactor
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

    /// The hash that decides whether a finished stage is still up to date.
    func optionsHash(uses: String, options: JSONValue) -> String {
        let canonical = JSONValue.object(["uses": .string(uses), "with": options]).serialized()
        return SHA256.hash(data: Data(canonical.utf8)).map { String(format: "%02x", $0) }.joined()
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
