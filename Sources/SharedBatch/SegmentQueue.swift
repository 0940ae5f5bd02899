import Foundation
public import PipelineKit
import PostgresNIO
import StageKit
package import StageRuntime

/// The units of segmented encodes in a shared batch: plans published by the workers that hold their items, units
/// claimed by any worker under leases with generations (as items are), completed with their digest.
///
/// Claims take the longest sources' units first, so that a long master's segments start before short clips'
/// items and the farm finishes together. A worker only claims units planned with its own encoder build.
public struct SegmentQueue: Sendable {
    let database: BatchDatabase

    /// The segment units in `database`.
    public init(database: BatchDatabase) {
        self.database = database
    }

    /// Records `plan` for `item`, whose lease the publishing worker holds at `generation` (a worker whose lease
    /// was taken over cannot publish), replacing other plans of the item; returns the units' states. Publishing a
    /// plan again keeps its units as they are (a plan another item published with the same source and settings
    /// moves to this one).
    package func publish(_ plan: SegmentPlan, item: Int64, generation: Int64) async throws(StateError)
        -> [SegmentUnitState]
    {
        let settings = plan.settings.serialized()
        let indexes = plan.units.map { Int32($0.index) }
        let kinds = plan.units.map(\.kind.rawValue)
        let starts = plan.units.map(\.start)
        let ends = plan.units.map { $0.end ?? -1 }
        let seconds = plan.units.map(\.seconds)
        let location = database.location
        try await database.transaction("publish a segment plan") { connection in
            var held = false
            for try await _ in try await connection.query(
                "SELECT 1 FROM items WHERE id = \(item) AND lease_generation = \(generation) FOR UPDATE",
                logger: database.logger)
            {
                held = true
            }
            guard held else {
                throw StateError(
                    code: .leaseLost,
                    message:
                        "cannot publish the segment plan of item \(item): its lease was taken over by another worker",
                    path: location)
            }
            try await connection.query(
                "DELETE FROM segment_plans WHERE item = \(item) AND id <> \(plan.id)", logger: database.logger)
            try await connection.query(
                """
                INSERT INTO segment_plans(id, item, input, settings, threads, encoder, seconds)
                VALUES (\(plan.id), \(item), \(plan.input), \(settings), \(Int32(plan.threads)), \(plan.encoder),
                    \(plan.seconds))
                ON CONFLICT (id) DO UPDATE SET item = EXCLUDED.item
                """, logger: database.logger)
            try await connection.query(
                """
                INSERT INTO segment_units(plan, unit, kind, start_seconds, end_seconds, seconds)
                SELECT \(plan.id), unit, kind, start_seconds, NULLIF(end_seconds, -1), seconds
                FROM unnest(\(indexes), \(kinds), \(starts), \(ends), \(seconds))
                    AS given(unit, kind, start_seconds, end_seconds, seconds)
                ON CONFLICT (plan, unit) DO NOTHING
                """, logger: database.logger)
        }
        return try await units(of: plan.id)
    }

    /// The plans recorded for `item` other than `plan`, with their units: those publishing `plan` replaces.
    package func otherPlans(of item: Int64, than plan: String) async throws(StateError) -> [String: [SegmentUnit]] {
        let rows = try await database.rows(
            "read the item's other segment plans",
            """
            SELECT \(unescaped: Self.unitColumns), segment_units.plan FROM segment_units
                JOIN segment_plans ON segment_plans.id = segment_units.plan
            WHERE segment_plans.item = \(item) AND segment_plans.id <> \(plan) ORDER BY segment_units.unit
            """)
        return try database.decoding("read the item's other segment plans") {
            var plans: [String: [SegmentUnit]] = [:]
            for columns in try NamedColumns.rows(of: rows) {
                let plan: String = try columns["plan"]
                plans[plan, default: []].append(try Self.unit(columns))
            }
            return plans
        }
    }

    /// The states of a plan's units, in unit order; empty when the plan is not (or no longer) recorded.
    package func units(of plan: String) async throws(StateError) -> [SegmentUnitState] {
        let rows = try await database.rows(
            "read a segment plan's units",
            """
            SELECT \(unescaped: Self.unitColumns), status, CASE WHEN status = 'done' THEN encoded_by
                WHEN lease_expires > now() THEN lease_owner END AS worker, size, sha256, attempts, abandoned
            FROM segment_units WHERE plan = \(plan) ORDER BY unit
            """)
        return try database.decoding("read a segment plan's units") {
            try NamedColumns.rows(of: rows).map { columns in
                let status: String = try columns["status"]
                return SegmentUnitState(
                    unit: try Self.unit(columns), status: SegmentUnitState.Status(rawValue: status) ?? .queued,
                    worker: try columns["worker"], size: try columns["size"], sha256: try columns["sha256"],
                    attempts: Int(try columns["attempts"] as Int32), abandoned: try columns["abandoned"])
            }
        }
    }

    /// Claims a unit that is not done and that no live lease holds, for `lease`: of `plan` when given, else the
    /// first by the longest source; within a plan its audio, then its segments in order (the join appends them in
    /// that order, as they are in place, when an upload streams the export); only units planned with `encoder`, of items that are
    /// queued and not being cancelled, claimed fewer than ``SegmentUnitState/attemptLimit`` times (a takeover is not
    /// an attempt). Nil when there is none. A unit whose counted takeover reaches `limit` is given up
    /// (``TakeoverLimit``): marked abandoned, which fails its item, and the next unit is claimed instead.
    package func claim(
        for worker: String, lease: Duration, encoder: String, in plan: String? = nil,
        by claimer: UnitClaimer = .freeJob(alone: true, staysAlone: true), limit: Int = TakeoverLimit.defaultLimit
    ) async throws(StateError) -> SegmentUnitClaim? {
        while true {
            guard let (claim, abandoned) = try await claimOnce(worker, lease, encoder, plan, claimer, limit) else {
                return nil
            }
            guard abandoned else { return claim }
            try await database.rows(
                "give up a segment unit",
                """
                UPDATE segment_units SET status = 'queued', lease_owner = NULL, lease_expires = NULL, abandoned = true,
                    attempts = greatest(attempts, \(Int32(SegmentUnitState.attemptLimit)))
                WHERE plan = \(claim.plan.id) AND unit = \(Int32(claim.unit.index))
                    AND lease_generation = \(claim.generation)
                """)
        }
    }

    /// One claim: the unit, and whether its takeover reached the limit.
    private func claimOnce(
        _ worker: String, _ lease: Duration, _ encoder: String, _ plan: String?, _ claimer: UnitClaimer, _ limit: Int
    ) async throws(StateError) -> (SegmentUnitClaim, abandoned: Bool)? {
        let rows = try await database.rows(
            "claim a segment unit", patience: lease,
            """
            WITH next AS (
                SELECT segment_units.plan AS next_plan, segment_units.unit AS next_unit,
                    CASE WHEN segment_units.status = 'running' THEN segment_units.lease_owner END AS previous_owner,
                    \(unescaped: TakeoverLimit.counted("segment_units")) AS counted
                FROM segment_units JOIN segment_plans ON segment_plans.id = segment_units.plan
                    JOIN items ON items.id = segment_plans.item
                WHERE segment_units.status <> 'done' AND segment_units.attempts < \(Int32(SegmentUnitState.attemptLimit))
                    AND (segment_units.lease_expires IS NULL OR segment_units.lease_expires < now())
                    AND \(unescaped: TakeoverLimit.claimable("segment_units", alone: claimer.takesSuspect))
                    AND segment_plans.encoder = \(encoder) AND (\(plan)::text IS NULL OR segment_plans.id = \(plan))
                    AND items.queued_with IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM cancel_requests WHERE cancel_requests.item = items.id)
                ORDER BY segment_plans.seconds DESC, segment_units.plan, segment_units.kind = 'audio' DESC,
                    segment_units.unit
                LIMIT 1 FOR UPDATE OF segment_units SKIP LOCKED)
            UPDATE segment_units SET status = 'running', lease_owner = \(worker), progress = 0,
                lease_generation = lease_generation + 1,
                attempts = attempts + CASE WHEN segment_units.lease_owner IS NULL THEN 1 ELSE 0 END,
                lease_expires = now() + make_interval(secs => \(lease.inSeconds)), \(unescaped: TakeoverLimit.renewed),
                \(unescaped: TakeoverLimit.claimed("segment_units", alone: claimer.alone, staysAlone: claimer.staysAlone))
            FROM next, segment_plans
            WHERE segment_units.plan = next.next_plan AND segment_units.unit = next.next_unit
                AND segment_plans.id = next.next_plan
            RETURNING \(unescaped: Self.unitColumns), segment_units.lease_generation, next.previous_owner,
                segment_plans.id AS plan_id, segment_plans.input, segment_plans.settings, segment_plans.threads,
                segment_plans.encoder, segment_plans.seconds AS plan_seconds, segment_units.suspect,
                next.counted AND segment_units.takeovers >= \(Int32(clamping: limit)) AS abandoned
            """)
        guard let row = rows.first else { return nil }
        let claimed: (SegmentUnit, Int64, String?, String, String, String, Int32, String, Double, Bool, Bool) =
            try database.decoding("claim a segment unit") {
                let columns = try NamedColumns(row)
                return (
                    try Self.unit(columns), try columns["lease_generation"], try columns["previous_owner"],
                    try columns["plan_id"], try columns["input"], try columns["settings"], try columns["threads"],
                    try columns["encoder"], try columns["plan_seconds"], try columns["suspect"],
                    try columns["abandoned"]
                )
            }
        let (unit, generation, previous, id, input, settingsText, threads, planEncoder, seconds, suspect, abandoned) =
            claimed
        let settings = try self.settings(settingsText, of: id)
        // The claim carries the plan without the other units: the encoding worker needs only its own.
        let claimedPlan = SegmentPlan(
            id: id, input: input, settings: settings, threads: Int(threads), encoder: planEncoder, seconds: seconds,
            units: [unit])
        let claim = SegmentUnitClaim(
            plan: claimedPlan, unit: unit, generation: generation, takenOverFrom: previous, suspect: suspect)
        return (claim, abandoned)
    }

    /// A plan's settings as stored.
    private func settings(_ text: String, of plan: String) throws(StateError) -> JSONValue {
        do {
            return try JSONValue(parsing: text)
        } catch {
            throw StateError(
                code: .corrupt, message: "the segment plan \(plan) in \(database.location) has unreadable settings",
                path: database.location)
        }
    }

    /// Records a unit as encoded by `worker`, if its lease is still the claim's; returns whether it was.
    package func complete(_ claim: SegmentUnitClaim, by worker: String, size: Int64, sha256: String)
        async throws(StateError) -> Bool
    {
        let rows = try await database.rows(
            "complete a segment unit",
            """
            UPDATE segment_units SET status = 'done', size = \(size), sha256 = \(sha256), encoded_by = \(worker),
                lease_owner = NULL, lease_expires = NULL, done_at = now()
            WHERE plan = \(claim.plan.id) AND unit = \(Int32(claim.unit.index))
                AND lease_generation = \(claim.generation) AND lease_owner = \(worker) AND status = 'running'
            RETURNING 1
            """)
        return !rows.isEmpty
    }

    /// Gives an unencoded unit back to the queue, if the claim still holds it.
    package func abandon(_ claim: SegmentUnitClaim, by worker: String) async throws(StateError) {
        try await database.rows(
            "give a segment unit back",
            """
            UPDATE segment_units SET status = 'queued', lease_owner = NULL, lease_expires = NULL
            WHERE plan = \(claim.plan.id) AND unit = \(Int32(claim.unit.index))
                AND lease_generation = \(claim.generation) AND status = 'running'
            """)
    }

    /// Marks a done unit queued again: its encoded file is missing from the segment store or does not match its
    /// digest, so it must be encoded again.
    public func requeue(plan: String, unit: Int) async throws(StateError) {
        try await database.rows(
            "queue a segment unit again",
            """
            UPDATE segment_units SET status = 'queued', size = NULL, sha256 = NULL, encoded_by = NULL, done_at = NULL
            WHERE plan = \(plan) AND unit = \(Int32(unit)) AND status = 'done'
            """)
    }

    /// Extends the leases of units `worker` encodes and records how far their encodes are; returns those it lost
    /// (the lease was taken over, or the plan was retired or replaced).
    package func renew(_ held: [HeldUnit], for worker: String, lease: Duration) async throws(StateError)
        -> [SegmentUnitClaim]
    {
        guard !held.isEmpty else { return [] }
        let plans = held.map(\.claim.plan.id)
        let units = held.map { Int32($0.claim.unit.index) }
        let generations = held.map(\.claim.generation)
        let progress = held.map(\.progress)
        let rows = try await database.rows(
            "renew segment unit leases",
            """
            UPDATE segment_units SET lease_expires = now() + make_interval(secs => \(lease.inSeconds)),
                \(unescaped: TakeoverLimit.renewed), progress = held.progress
            FROM unnest(\(plans), \(units), \(generations), \(progress)) AS held(plan, unit, generation, progress)
            WHERE segment_units.plan = held.plan AND segment_units.unit = held.unit
                AND segment_units.lease_generation = held.generation AND segment_units.lease_owner = \(worker)
                AND segment_units.status = 'running'
            RETURNING segment_units.plan, segment_units.unit
            """)
        let kept: Set<String> = try database.decoding("renew segment unit leases") {
            Set(
                try rows.map { row in
                    let (plan, unit) = try row.decode((String, Int32).self)
                    return "\(plan)/\(unit)"
                })
        }
        return held.map(\.claim).filter { !kept.contains("\($0.plan.id)/\($0.unit.index)") }
    }

    /// The plans with units left to encode that were planned with another encoder build than `encoder`, with
    /// that build.
    public func openPlans(otherThan encoder: String) async throws(StateError) -> [String: String] {
        let rows = try await database.rows(
            "read the open segment plans",
            """
            SELECT DISTINCT segment_plans.id, segment_plans.encoder FROM segment_plans
                JOIN segment_units ON segment_units.plan = segment_plans.id
            WHERE segment_plans.encoder <> \(encoder) AND segment_units.status <> 'done'
            """)
        return try database.decoding("read the open segment plans") {
            Dictionary(
                try rows.map { row in try row.decode((String, String).self) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// Removes a plan and its units (they are joined).
    public func retire(_ plan: String) async throws(StateError) {
        try await database.rows("retire a segment plan", "DELETE FROM segment_plans WHERE id = \(plan)")
    }

    /// The columns ``unit(_:)`` reads, by name: a query may select more, in any order.
    private static let unitColumns = """
        segment_units.unit, segment_units.kind, segment_units.start_seconds, segment_units.end_seconds,
        segment_units.seconds
        """

    /// The unit of a row that has the ``unitColumns``.
    private static func unit(_ columns: NamedColumns) throws -> SegmentUnit {
        let kind: String = try columns["kind"]
        return SegmentUnit(
            index: Int(try columns["unit"] as Int32), kind: SegmentUnit.Kind(rawValue: kind) ?? .video,
            start: try columns["start_seconds"], end: try columns["end_seconds"], seconds: try columns["seconds"])
    }
}

/// Who claims a segment unit, for the takeover limit (``TakeoverLimit``).
package enum UnitClaimer: Sendable {
    /// The worker holding the unit's item, encoding its units beside it: it may take a suspect unit (its own item's:
    /// nobody else may be free to), but never holds one alone.
    case itemHolder
    /// A worker with a free job; `alone`: it runs nothing else now; `staysAlone`: it never runs more than one.
    case freeJob(alone: Bool, staysAlone: Bool)

    var takesSuspect: Bool {
        switch self {
        case .itemHolder: true
        case .freeJob(let alone, _): alone
        }
    }

    var alone: Bool {
        switch self {
        case .itemHolder: false
        case .freeJob(let alone, _): alone
        }
    }

    var staysAlone: Bool {
        switch self {
        case .itemHolder: false
        case .freeJob(_, let staysAlone): staysAlone
        }
    }
}
