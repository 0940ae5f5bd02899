import Foundation
import Logging
import NIOConcurrencyHelpers
import StageKit
import StageRuntime

/// A stage's credentials expired: renew them with its `refreshWith` stage, or fail the item.
struct CredentialsExpired: Error {
    var report: FailureReport
}

extension Runner {
    /// Runs a stage with its retry policy and timeout; returns its outputs. A stage that retries itself runs once
    /// under the policy, and its own retries become the run's retry events.
    func attempt(
        _ stage: ResolvedStage, input: InputItem, ref: ItemVersion, options: JSONValue, previousOutputs: JSONValue?,
        journal: StageJournal, stream: ExportStream? = nil,
        beforeSuccess: ([String: String]?) async throws -> Void = { _ in }
    ) async throws -> JSONValue {
        let spec = stage.spec
        let label = input.relativePath
        let clock = ContinuousClock()
        let runs = stage.descriptor.retriesItself ? 1 : spec.retry.attempts
        for attempt in 1...runs {
            var started = clock.now
            var began = false
            let log = AttemptLog()
            do {
                let outputs = try await run(
                    stage, attempt: attempt, input: input, ref: ref, options: options,
                    previousOutputs: previousOutputs, journal: journal, stream: stream, log: log
                ) { (started, began) = (clock.now, true) }
                try await succeed(
                    spec, label: label, outputs: outputs, seconds: (clock.now - started).seconds, log: log.lines,
                    journal: journal, beforeSuccess: beforeSuccess)
                return outputs
            } catch {
                // The history is written after the attempt's own checkpoint, never before it.
                let seconds = (clock.now - started).seconds
                do {
                    try await recover(
                        from: error, spec: spec, label: label, attempt: attempt, of: runs, seconds: seconds,
                        journal: journal)
                } catch let ending {
                    await remember(error, began: began, ref: ref, seconds: seconds, journal: journal, log: log)
                    throw ending
                }
                await remember(error, began: began, ref: ref, seconds: seconds, journal: journal, log: log)
            }
        }
        throw ItemFailure(
            report: FailureReport(message: "stage \(spec.id) (\(spec.uses)) made no attempt", kind: .failed))
    }

    /// Runs one attempt once its resource has a free slot (`started` is called then: waiting is not part of
    /// its timeout).
    private func run(
        _ stage: ResolvedStage, attempt: Int, input: InputItem, ref: ItemVersion, options: JSONValue,
        previousOutputs: JSONValue?, journal: StageJournal, stream: ExportStream?, log: AttemptLog,
        started: () -> Void
    ) async throws -> JSONValue {
        let spec = stage.spec
        let label = input.relativePath
        let attempts = spec.retry.attempts
        return try await slots.holding(stage.descriptor.resource) { slot in
            started()
            let starting: @Sendable (inout StageRecord) -> Void = {
                $0.status = .running
                $0.attempts += 1
                $0.startedAt = Date()
                $0.finishedAt = nil
                $0.seconds = nil
                $0.log = nil
            }
            // The attempt may reach outside: a commit that did not wait for its sync (the run's start, the item's
            // admission, its claims) is synced first, with this start in it (``DeferredCommit``). Otherwise the
            // start waits for the stage's first checkpoint.
            if store.holdsDeferredCommits {
                try await journal.update(starting)
            } else {
                await journal.note(starting)
            }
            sink.emit(
                StageStarted(
                    item: label, stage: spec.id, uses: spec.uses, attempt: attempt, attempts: attempts,
                    after: stage.after))
            var services = services.holding(slot)
            services[ExportStreamKey.self] = stream
            if stage.descriptor.streamRole == .follower { services[FollowedExportKey.self] = stream }
            let context = StageContext(
                stageID: spec.id, stageType: spec.uses, item: input, attempt: attempt,
                logger: logger(item: label, stage: spec.id, log: log),
                scratchFolder: scratchRoot.appendingPathComponent("\(ref.item)").appendingPathComponent(spec.id),
                services: services, previousOutputs: previousOutputs,
                savedCheckpoint: await journal.current.resume, checkpointer: journal,
                progress: progressReporter(item: label, stage: spec.id), retryPolicy: spec.retry,
                retrying: { retry in
                    sink.emit(
                        StageRetrying(
                            item: label, stage: spec.id, attempt: retry.attempt, attempts: attempts,
                            delay: retry.delay, error: report(retry.error)))
                })
            let descriptor = stage.descriptor
            return try await withTimeout(spec.timeout) {
                try await descriptor.run(options: options, context: context)
            }
        }
    }

    /// Checkpoints a stage's success (secret outputs stay out of the store and join the redactor) with the lines it
    /// logged meanwhile; a secret stage keeps none, as they were logged before the redactor knew its outputs.
    private func succeed(
        _ spec: StageSpec, label: String, outputs: JSONValue, seconds: Double, log: [String], journal: StageJournal,
        beforeSuccess: ([String: String]?) async throws -> Void
    ) async throws {
        if spec.isSecret { redactor.add(all: outputs, as: spec.id) }
        let files = spec.isSecret ? nil : OutputFiles.fingerprints(in: outputs)
        try await beforeSuccess(files)
        try await journal.update {
            $0.status = .succeeded
            $0.outputs = spec.isSecret ? nil : outputs
            $0.files = files
            $0.error = nil
            $0.errorKind = nil
            $0.log = spec.isSecret || log.isEmpty ? nil : log
            $0.finish(after: seconds)
        }
        sink.emit(StageFinished(item: label, stage: spec.id, outcome: .succeeded, seconds: seconds))
    }

    /// Returns when a failed attempt is to be tried again (after its delay); otherwise checkpoints the failure
    /// and throws what ends the item: its failure, ``CredentialsExpired``, or `CancellationError`.
    private func recover(
        from error: any Error, spec: StageSpec, label: String, attempt: Int, of runs: Int, seconds: Double,
        journal: StageJournal
    ) async throws {
        if Task.isCancelled {
            try await interrupt(journal, spec: spec, label: label, seconds: seconds)
        }
        if let state = error as? StateError {
            // A lost lease ends the item here without failing it (``runItem`` decides that in one place).
            if state.code == .leaseLost { throw state }
            throw ItemFailure(report: report(error))
        }
        let failure = report(error)
        let disposition = (error as? any ClassifiedError)?.disposition ?? .fatal
        if disposition == .credentialsExpired {
            try await expire(spec, label: label, failure: failure, attempt: attempt, seconds: seconds, journal: journal)
        }
        let attempts = spec.retry.attempts
        if case .retryable(let minimum) = disposition, attempt < runs {
            let delay = spec.retry.delay(afterAttempt: attempt, minimum: minimum)
            try await journal.update { $0.record(failure) }
            sink.emit(
                StageRetrying(
                    item: label, stage: spec.id, attempt: attempt, attempts: attempts, delay: delay, error: failure))
            do {
                try await Task.sleep(for: delay)
            } catch {
                try await interrupt(journal, spec: spec, label: label, seconds: seconds)
            }
            return
        }
        try await journal.update {
            $0.status = .failed
            $0.record(failure)
            $0.finish(after: seconds)
        }
        sink.emit(StageFinished(item: label, stage: spec.id, outcome: .failed, seconds: seconds, error: failure))
        let tries = attempt == 1 ? "" : " after \(attempt) attempts"
        throw ItemFailure(report: failure.prefixed("stage \(spec.id) (\(spec.uses)) failed\(tries): "))
    }

    /// Checkpoints expired credentials and throws ``CredentialsExpired``: a retry when the stage has a
    /// `refreshWith` stage to renew them, its failure otherwise.
    private func expire(
        _ spec: StageSpec, label: String, failure: FailureReport, attempt: Int, seconds: Double,
        journal: StageJournal
    ) async throws -> Never {
        try await journal.update { $0.record(failure) }
        if spec.refreshWith == nil {
            sink.emit(StageFinished(item: label, stage: spec.id, outcome: .failed, seconds: seconds, error: failure))
        } else {
            sink.emit(
                StageRetrying(
                    item: label, stage: spec.id, attempt: attempt, attempts: spec.retry.attempts, delay: .zero,
                    error: failure))
        }
        let advice = spec.refreshWith == nil ? " (give the stage refreshWith: a stage that renews the token)" : ""
        throw CredentialsExpired(report: failure.prefixed("stage \(spec.id) (\(spec.uses)) failed: ", advice: advice))
    }

    /// Marks a stage interrupted (its resume data stays) and ends the item.
    func interrupt(_ journal: StageJournal, spec: StageSpec, label: String, seconds: Double) async throws -> Never {
        try? await journal.update {
            $0.status = .interrupted
            $0.finish(after: seconds)
        }
        sink.emit(StageFinished(item: label, stage: spec.id, outcome: .interrupted, seconds: seconds))
        throw CancellationError()
    }

    /// Reports a stage that could not start, and the failure that ends its item.
    func fail(_ spec: StageSpec, label: String, _ failure: StageFailure) -> ItemFailure {
        let failure = report(failure)
        sink.emit(StageFinished(item: label, stage: spec.id, outcome: .failed, seconds: 0, error: failure))
        return ItemFailure(report: failure.prefixed("stage \(spec.id) (\(spec.uses)) "))
    }

    /// An error as events and state carry it: its message with secrets redacted, and its kind.
    func report(_ error: any Error) -> FailureReport {
        switch error {
        case let failure as ItemFailure: failure.report
        case let expired as CredentialsExpired: expired.report
        case let state as StateError: FailureReport(message: redactor.shown(state.message), kind: .state)
        case let classified as any ClassifiedError:
            FailureReport(message: redactor.shown(String(describing: classified)), kind: classified.kind)
        default: FailureReport(message: redactor.shown(String(describing: error)), kind: .failed)
        }
    }

    /// The logger of an attempt of `stage`: its lines become events, and their end stays in `log`.
    private func logger(item: String, stage: String, log: AttemptLog) -> Logger {
        let sink = self.sink
        let redactor = self.redactor
        let level = logLevel
        return Logger(label: "pipeline.\(stage)") { _ in
            EventLogHandler(
                sink: sink, redactor: redactor, item: item, stage: stage, logLevel: level, attemptLog: log)
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
