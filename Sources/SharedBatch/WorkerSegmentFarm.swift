import Logging
import NIOConcurrencyHelpers
package import PipelineKit
import PostgresNIO
package import StageKit
package import StageRuntime

/// A worker's side of the segment units of a shared batch: it publishes the plans of the items the worker holds,
/// claims units under leases that ``run()`` renews, and cancels a unit's encode whose lease another worker took
/// over.
package final class WorkerSegmentFarm: SegmentFarm {
    /// The encoder build of this worker.
    package let encoder: String
    private let queue: SegmentQueue
    private let database: BatchDatabase
    private let worker: String
    /// The lease its claims hold units for, and how often it renews them.
    private let settings: WorkerSettings
    private let leases: LeaseBook
    private let sink: any RunEventSink
    private let held = NIOLockedValueBox<[String: Holding]>([:])
    /// Plans of other encoder builds this worker has said it leaves alone.
    private let leftAlone = NIOLockedValueBox<Set<String>>([])

    /// A unit being encoded, how far its encode is, and how to stop it.
    private struct Holding {
        var claim: SegmentUnitClaim
        var progress = 0.0
        var stop: @Sendable () -> Void
    }

    /// The farm of worker `worker` (whose item leases are `leases`) on `database`, claiming units for the lease of
    /// `settings` and only those planned with `encoder`; what it has to say goes to `sink`.
    package init(
        database: BatchDatabase, worker: String, settings: WorkerSettings, leases: LeaseBook, encoder: String,
        sink: any RunEventSink
    ) {
        self.database = database
        self.queue = SegmentQueue(database: database)
        self.worker = worker
        self.settings = settings
        self.leases = leases
        self.encoder = encoder
        self.sink = sink
    }

    package func publish(_ plan: SegmentPlan, for item: InputItem) async throws -> [SegmentUnitState] {
        let (id, generation) = try await lease(of: item, for: "publish the segment plan of")
        return try await queue.publish(plan, item: id, generation: generation)
    }

    package func otherPlans(of item: InputItem, than plan: String) async throws -> [String: [SegmentUnit]] {
        let (id, _) = try await lease(of: item, for: "read the segment plans of")
        return try await queue.otherPlans(of: id, than: plan)
    }

    /// The id of `item` in the batch and this worker's lease generation on it; `doing` says what needs it.
    private func lease(of item: InputItem, for doing: String) async throws -> (id: Int64, generation: Int64) {
        let held = leases.all
        let rows = try await database.rows(
            "find the item of a segment plan",
            "SELECT id FROM items WHERE path = \(item.path) AND id = ANY(\(Array(held.keys))) ORDER BY id LIMIT 1")
        guard let row = rows.first else {
            throw StateError(
                code: .leaseLost,
                message: "cannot \(doing) \(item.path): this worker holds no lease on its item",
                path: database.location)
        }
        let id: Int64 = try database.decoding("find the item of a segment plan") { try row.decode(Int64.self) }
        guard let generation = held[id] else {
            throw StateError(
                code: .leaseLost, message: "cannot \(doing) \(item.path): its lease was lost", path: database.location)
        }
        return (id, generation)
    }

    /// A unit of `plan`, for the worker holding its item (``UnitClaimer/itemHolder``).
    package func claim(in plan: String) async throws -> SegmentUnitClaim? {
        try await queue.claim(
            for: worker, lease: settings.lease, encoder: encoder, in: plan, by: .itemHolder,
            limit: settings.abandonAfter)
    }

    /// A unit of any plan, for a free job of the worker; `alone`: the worker runs nothing else now.
    package func claimForWorker(alone: Bool) async throws -> SegmentUnitClaim? {
        let claim = try await queue.claim(
            for: worker, lease: settings.lease, encoder: encoder,
            by: .freeJob(alone: alone, staysAlone: settings.jobs == 1), limit: settings.abandonAfter)
        if claim == nil { try await sayWhichPlansAreLeftAlone() }
        return claim
    }

    /// Says once per plan that its units are left to workers of its encoder build.
    private func sayWhichPlansAreLeftAlone() async throws {
        for (plan, build) in try await queue.openPlans(otherThan: encoder) {
            guard leftAlone.withLockedValue({ $0.insert(plan).inserted }) else { continue }
            note(
                .notice,
                "leaving the units of segment plan \(plan) to other workers: they are encoded with \(build), this worker has \(encoder)"
            )
        }
    }

    private func note(_ level: Logger.Level, _ message: String) {
        sink.emit(LogLine(level: level, item: nil, stage: nil, message: message))
    }

    package func whileHolding<T: Sendable>(
        _ claim: SegmentUnitClaim, _ body: @escaping @Sendable (@escaping @Sendable (Double) -> Void) async throws -> T
    ) async throws -> T {
        let key = Self.key(claim)
        let task = Task { [held] in try await body { fraction in held.withLockedValue { $0[key]?.progress = fraction } }
        }
        held.withLockedValue { $0[key] = Holding(claim: claim, stop: { task.cancel() }) }
        defer { _ = held.withLockedValue { $0.removeValue(forKey: key) } }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    package func complete(_ claim: SegmentUnitClaim, size: Int64, sha256: String) async throws {
        guard try await queue.complete(claim, by: worker, size: size, sha256: sha256) else {
            throw SegmentUnitLost(plan: claim.plan.id, unit: claim.unit.index)
        }
    }

    package func abandon(_ claim: SegmentUnitClaim) async {
        do {
            try await queue.abandon(claim, by: worker)
        } catch {
            // Its lease lapses, and another worker claims it then.
            note(.warning, "cannot give unit \(claim.unit.index) of segment plan \(claim.plan.id) back: \(error)")
        }
    }

    package func units(of plan: String) async throws -> [SegmentUnitState] {
        try await queue.units(of: plan)
    }

    package func requeue(_ unit: SegmentUnit, of plan: String) async throws {
        try await queue.requeue(plan: plan, unit: unit.index)
    }

    package func retire(_ plan: String) async throws {
        try await queue.retire(plan)
    }

    /// Renews the leases of the units being encoded at the worker's heartbeat, and stops the encodes of those lost,
    /// until the task is cancelled. When the leases could not be renewed for the worker's silence limit (the
    /// database is unreachable), every encode stops: another worker may claim those units once their leases run out.
    package func run() async {
        var renewed = ContinuousClock.now
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: settings.heartbeat)
            } catch {
                return
            }
            let holding = held.withLockedValue { Array($0.values) }
            guard !holding.isEmpty else {
                renewed = .now
                continue
            }
            do {
                let lost = try await queue.renew(
                    holding.map { HeldUnit(claim: $0.claim, progress: $0.progress) }, for: worker,
                    lease: settings.lease)
                renewed = .now
                for claim in lost {
                    note(
                        .warning,
                        "unit \(claim.unit.index) of segment plan \(claim.plan.id) was taken over by another worker: stopping its encode"
                    )
                    held.withLockedValue { $0[Self.key(claim)] }?.stop()
                }
            } catch {
                note(.warning, "cannot renew the leases of segment units: \(error)")
                if ContinuousClock.now - renewed >= settings.silenceLimit {
                    note(.warning, "stopping \(holding.count) unit encode(s) before their leases run out")
                    for holding in holding { holding.stop() }
                }
            }
        }
    }

    /// A claim's key among those held: with its generation, so that a stale encode of a unit that was claimed
    /// again never drops the newer claim.
    private static func key(_ claim: SegmentUnitClaim) -> String {
        "\(claim.plan.id)/\(claim.unit.index)/\(claim.generation)"
    }
}
