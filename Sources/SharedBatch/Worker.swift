import Foundation
import Logging
import NIOConcurrencyHelpers
public import PipelineKit
import StageKit
import StageRuntime

/// Builds the runner for a submitted workflow, writing to `store`; an error is the reason the worker logs when it
/// leaves the workflow's items to other workers. ``WorkerRunners/factory`` is the one the worker command uses (it
/// loads the stage types, plugins and environment); a function, so that claiming and leases do not depend on how a
/// runner is made.
public typealias RunnerFactory = @Sendable (SubmittedWorkflow, any StateStore) async throws -> Runner

/// A submitted workflow this worker cannot run: a plugin or an environment variable it lacks, say.
public struct WorkerError: Error, Sendable, CustomStringConvertible {
    /// What happened.
    public var message: String
    public var description: String { message }

    /// An error saying `message`.
    public init(message: String) {
        self.message = message
    }
}

/// Takes items of a shared batch from the queue and runs them, until its task is cancelled or it is asked to drain
/// or stop (``WorkerRequest``).
///
/// Up to ``WorkerSettings/jobs`` items run at once, each under a lease that a heartbeat renews. An item whose
/// lease another worker took over is stopped as soon as this worker learns it (at its next heartbeat or its next
/// write, which the store refuses) and its result is dropped. When the task is cancelled (SIGTERM) or a stop is
/// asked, the worker claims nothing more, its items stop at their next checkpoint and are let go, still queued,
/// for another worker to resume. Asked to drain, it claims nothing new and returns once the items it holds are
/// done. It publishes its running stages' progress on its row, cleared when it stops.
public final class Worker: Sendable {
    /// This worker as the database lists it.
    public let identity: WorkerRecord
    /// The store its runners write to, fenced by its leases.
    public let store: PostgresStore
    let queue: BatchQueue
    let leases: LeaseBook
    let settings: WorkerSettings
    private let makeRunner: RunnerFactory
    let sink: any RunEventSink
    let metrics: WorkerMetrics
    /// The segmented encodes this worker shares with the others, when it was given a segment store.
    private let segments: (work: SegmentWork, farm: WorkerSegmentFarm)?
    /// The running stages of its runners, published on its row.
    let progress = WorkerProgress()
    let state = NIOLockedValueBox(State())

    /// Runners and unrunnable workflows are kept by the workflow's key (its document and vars), not its number: a
    /// database emptied and given a new batch numbers its workflows from 1 again.
    struct State {
        var runners: [String: Runner] = [:]
        /// Workflows this worker cannot run, with the reason: their items are left to other workers.
        var unrunnable: [String: String] = [:]
        var working: [Int64: Working] = [:]
        /// Items this worker stopped itself because it lost contact with the database: nobody took them over.
        var letGo: Set<Int64> = []
        /// When the leases were last renewed.
        var renewed = ContinuousClock.now
        var done: Int64 = 0
        var failed: Int64 = 0
        var tookOver: Int64 = 0
        /// What the worker was asked to do (``WorkerRequest``), once it saw it.
        var request: WorkerRequest?
        /// The task that claims and runs items: a stop cancels it.
        var claiming: Task<Void, Never>?
    }

    /// An item being worked on: its task and the runner it runs under.
    struct Working {
        var task: Task<ItemResult, Never>
        var runner: Runner
    }

    /// A worker on `database`; with `segments`, it shares the units of segmented encodes with the other workers
    /// (it publishes those of its items, and encodes any worker's when it has a free job).
    package init(
        database: BatchDatabase, settings: WorkerSettings, sink: any RunEventSink, metrics: WorkerMetrics,
        segments: SegmentWork? = nil, makeRunner: @escaping RunnerFactory
    ) {
        let leases = LeaseBook()
        let identity = WorkerRecord.current()
        self.identity = identity
        self.segments = segments.map { work in
            (
                work,
                WorkerSegmentFarm(
                    database: database, worker: identity.id, settings: settings, leases: leases,
                    encoder: work.encoding.build, sink: sink)
            )
        }
        store = PostgresStore(database: database, leases: leases)
        queue = BatchQueue(database: database)
        self.leases = leases
        self.settings = settings
        self.makeRunner = makeRunner
        self.sink = sink
        self.metrics = metrics
    }

    /// Works until the task is cancelled, or until it was asked to drain (once the items it holds are done) or to
    /// stop (its items let go at once, as a cancel lets them go); then lets its items go, says it stopped, and
    /// returns. Throws when the database cannot be reached at the start.
    public func run() async throws {
        try await heartbeat()
        let beats = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: settings.heartbeat)
                guard !Task.isCancelled else { break }
                try? await heartbeat()
            }
        }
        sink.emit(
            LogLine(
                level: .notice, item: nil, stage: nil,
                message: "worker \(identity.id) started on \(store.location) (\(settings.jobs) job(s))"))
        let renewals = segments.map { segments in Task { await segments.farm.run() } }
        let claiming = Task { await work() }
        let stopAsked = state.withLockedValue { state in
            state.claiming = claiming
            return state.request == .stop
        }
        if stopAsked { claiming.cancel() }
        let control = Task { await followRequests() }
        await withTaskCancellationHandler {
            await claiming.value
        } onCancel: {
            claiming.cancel()
        }
        control.cancel()
        beats.cancel()
        renewals?.cancel()
        // A progress write or a heartbeat in flight finishes first (the database's retries run in tasks that
        // cancellation does not reach): none lands after the row says it stopped and its progress is cleared.
        await control.value
        await beats.value
        try? await queue.stopped(record)
        sink.emit(LogLine(level: .notice, item: nil, stage: nil, message: "worker \(identity.id) stopped"))
    }

    private enum Event: Sendable {
        case finished(claim: Int)
        case idle
    }

    /// Claims items while there are free jobs, and waits for one to finish or for the next look at the queue. A
    /// suspect item or unit (taken over since its last progress) is claimed only when nothing else runs; nothing more
    /// is claimed while it is held alone, until it ends or (an item) makes progress (``TakeoverLimit``).
    private func work() async {
        await withTaskGroup(of: Event.self) { group in
            var active = 0
            var waiting = false
            var claims = 0
            var heldAlone: (claim: Int, work: Work)?
            while !Task.isCancelled {
                while active < settings.jobs, heldAlone == nil, !Task.isCancelled, !draining,
                    let next = await claimNext(alone: active == 0)
                {
                    claims += 1
                    if active == 0, next.suspect { heldAlone = (claims, next) }
                    active += 1
                    let number = claims
                    group.addTask { [self] in
                        switch next {
                        case .item(let claim): await process(claim)
                        case .unit(let claim): await encode(claim)
                        }
                        return .finished(claim: number)
                    }
                }
                if active < settings.jobs, !waiting {
                    waiting = true
                    let poll = settings.poll
                    group.addTask {
                        try? await Task.sleep(for: poll)
                        return .idle
                    }
                }
                switch await group.next() {
                case .finished(let number):
                    active -= 1
                    if heldAlone?.claim == number { heldAlone = nil }
                case .idle:
                    waiting = false
                    if let held = heldAlone, await madeProgress(held.work) { heldAlone = nil }
                case nil: break
                }
                // Drained: the look at the queue still waiting is not needed any more.
                if draining, active == 0 {
                    group.cancelAll()
                    break
                }
            }
            await group.waitForAll()
        }
    }

    /// Whether a suspect item held alone made progress, so that its lone hold ends; a unit's progress is its end.
    private func madeProgress(_ work: Work) async -> Bool {
        guard case .item(let claim) = work else { return false }
        return (try? await queue.endLoneHold(of: claim.item.id, generation: claim.generation)) ?? false
    }

    /// What a free job takes up.
    private enum Work: Sendable {
        case item(Claim)
        case unit(SegmentUnitClaim)

        /// Whether it was taken over since its last progress: it runs alone.
        var suspect: Bool {
            switch self {
            case .item(let claim): claim.suspect && !claim.abandoned
            case .unit(let claim): claim.suspect
            }
        }
    }

    /// The next unit of a shared segmented encode (the longest sources' first), else the next item; nil when
    /// there is neither (or the queue cannot be read: the error is reported and the worker tries again at its next
    /// look). `alone`: the worker runs nothing else now.
    private func claimNext(alone: Bool) async -> Work? {
        if let segments {
            do {
                if let unit = try await segments.farm.claimForWorker(alone: alone) { return .unit(unit) }
            } catch {
                sink.emit(
                    LogLine(level: .warning, item: nil, stage: nil, message: "cannot claim a segment unit: \(error)"))
            }
        }
        return await claimItem(alone: alone).map(Work.item)
    }

    /// The next item, or nil when the queue has none (or cannot be read).
    private func claimItem(alone: Bool) async -> Claim? {
        let clock = ContinuousClock()
        let started = clock.now
        let (working, unrunnable) = state.withLockedValue { (Array($0.working.keys), Array($0.unrunnable.keys)) }
        do {
            let claim = try await queue.claim(
                for: identity.id, lease: settings.lease, excludingItems: working, workflows: unrunnable,
                alone: alone, staysAlone: settings.jobs == 1, limit: settings.abandonAfter)
            if claim != nil { metrics.claimed(after: clock.now - started) }
            return claim
        } catch {
            sink.emit(LogLine(level: .warning, item: nil, stage: nil, message: "cannot claim an item: \(error)"))
            return nil
        }
    }

    private func process(_ claim: Claim) async {
        let item = claim.item
        let label = item.input.relativePath
        guard let runner = await runner(for: claim.workflow) else {
            try? await queue.release(item.id, generation: claim.generation)
            return
        }
        leases.hold(item.id, generation: claim.generation)
        let refusal = announce(claim)
        let task = Task { await runner.resume(item, digest: claim.digest, refusal: refusal) }
        state.withLockedValue { $0.working[item.id] = Working(task: task, runner: runner) }
        let result = await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        let letGo = state.withLockedValue { state in
            _ = state.working.removeValue(forKey: item.id)
            return state.letGo.remove(item.id) != nil
        }
        // A result this worker recorded (the ledger took it before the lease went) counts as any other; one the
        // ledger refused, or an item stopped for lack of the database, is another worker's to finish.
        if leases.release(item.id), result.outcome == .interrupted {
            metrics.lostLease()
            if letGo {
                sink.emit(
                    LogLine(
                        level: .warning, item: label, stage: nil,
                        message:
                            "stopped without contact with the database; a worker resumes it from its checkpoints once the database is back"
                    ))
                return
            }
            sink.emit(
                LogLine(
                    level: .warning, item: label, stage: nil,
                    message: "another worker took this item over (this worker's lease expired): dropped its result"))
            return
        }
        metrics.finished(result.outcome)
        state.withLockedValue { state in
            switch result.outcome {
            case .done: state.done += 1
            case .failed: state.failed += 1
            case .reused, .skipped, .interrupted: break
            }
        }
    }

    /// Says that `claim` took its item over, and that it fails it as abandoned when it does; returns the failure.
    private func announce(_ claim: Claim) -> StageFailure? {
        let label = claim.item.input.relativePath
        if let previous = claim.takenOverFrom {
            metrics.tookOver()
            state.withLockedValue { $0.tookOver += 1 }
            sink.emit(
                LogLine(
                    level: .notice, item: label, stage: nil,
                    message: "taking over from worker \(previous), whose lease expired; resuming from its checkpoints"))
        }
        guard claim.abandoned else { return nil }
        sink.emit(
            LogLine(
                level: .error, item: label, stage: nil,
                message:
                    "failing this item as abandoned: its worker died \(claim.takeovers) time(s) since its last progress (--abandon-after \(settings.abandonAfter))"
            ))
        return TakeoverLimit.failure(takeovers: claim.takeovers)
    }

    /// Encodes a unit of another item's segmented encode, puts it in the segment store and records it; a unit
    /// whose encode fails or stops goes back to the queue for any worker.
    private func encode(_ claim: SegmentUnitClaim) async {
        guard let segments else { return }
        if let previous = claim.takenOverFrom {
            sink.emit(
                LogLine(
                    level: .notice, item: nil, stage: nil,
                    message:
                        "taking unit \(claim.unit.index) of segment plan \(claim.plan.id) over from worker \(previous), whose lease expired"
                ))
        }
        do {
            let encoded = try await segments.farm.whileHolding(claim) {
                try await segments.work.encoding.encode(claim, $0)
            }
            try await segments.farm.complete(claim, size: encoded.size, sha256: encoded.sha256)
        } catch {
            if !(error is CancellationError) {
                sink.emit(
                    LogLine(
                        level: .warning, item: nil, stage: nil,
                        message: "unit \(claim.unit.index) of segment plan \(claim.plan.id) failed: \(error)"))
            }
            await segments.farm.abandon(claim)
        }
    }

    /// The runner of a submitted workflow (by its key), built once per workflow version; nil when this worker cannot
    /// run it (a plugin or an environment variable it lacks): the reason is reported once, and its items are left to
    /// other workers. Nil too when the workflow could not be read (the database away, the batch emptied meanwhile):
    /// that is said, and the item goes back to the queue, for this worker too.
    private func runner(for workflow: String) async -> Runner? {
        if let runner = state.withLockedValue({ $0.runners[workflow] }) { return runner }
        let submitted: SubmittedWorkflow
        do {
            submitted = try await queue.workflow(workflow)
        } catch {
            sink.emit(
                LogLine(
                    level: .warning, item: nil, stage: nil,
                    message: "cannot read a claimed item's workflow: \(error); it goes back to the queue"))
            return nil
        }
        var runner: Runner
        do {
            runner = try await makeRunner(submitted, store)
        } catch {
            let reason = "cannot run workflow \(submitted.name) as submitted from \(submitted.file): \(error)"
            state.withLockedValue { $0.unrunnable[workflow] = reason }
            sink.emit(
                LogLine(level: .error, item: nil, stage: nil, message: "\(reason); leaving its items to other workers")
            )
            return nil
        }
        if let segments {
            runner.services[SegmentFarmKey.self] = segments.farm
            runner.services[SegmentStoreKey.self] = segments.work.store
        }
        // Its running stages, for the dashboard: the same board a local run's progress file is written from.
        runner.sink = ProgressBoard(next: runner.sink) { [progress] in
            progress.update(key: workflow, name: submitted.name, $0)
        }
        state.withLockedValue { $0.runners[workflow] = runner }
        return runner
    }

    /// This worker's counts, as the database lists them.
    var record: WorkerRecord {
        var record = identity
        (record.done, record.failed, record.tookOver) = state.withLockedValue { ($0.done, $0.failed, $0.tookOver) }
        return record
    }
}
