package import StageKit

/// The units of segmented encodes shared by the workers of a batch: a worker that reaches a segmented transcode
/// publishes its plan, any worker may claim and encode a unit of it, and the planning worker joins the units once
/// all are done.
///
/// Present in ``StageContext/services`` (under ``SegmentFarmKey``) only where several workers share a batch; a
/// local run encodes its segments itself. Units are claimed under leases, as items are: a unit whose worker dies
/// is claimed again once its lease expires, and a completion under a lease that was taken over is refused.
package protocol SegmentFarm: Sendable {
    /// The encoder build units are claimed for: a worker only encodes units planned with its own build, because
    /// the joined file must not depend on which worker encoded which segment.
    var encoder: String { get }

    /// Records `plan` and its units for `item`, which this worker holds (once: publishing the same plan again
    /// changes nothing; a plan of the item published before with other settings is replaced) and returns the
    /// units' states.
    func publish(_ plan: SegmentPlan, for item: InputItem) async throws -> [SegmentUnitState]

    /// The plans recorded for `item` other than `plan`, with their units: those publishing `plan` replaces (the
    /// source or the settings changed), whose segments may still be in the segment store.
    func otherPlans(of item: InputItem, than plan: String) async throws -> [String: [SegmentUnit]]

    /// Claims a unit of `plan` no live lease holds, for the worker holding the plan's item. Nil when there is none.
    func claim(in plan: String) async throws -> SegmentUnitClaim?

    /// Runs `body` (the claimed unit's encode) while the farm renews the claim's lease; when the lease is lost
    /// (the worker stalled and another one took the unit over), `body` is cancelled, so that two workers never
    /// encode the same unit at once for long. `body` reports the fraction of the unit it has encoded to the
    /// function it is given; the farm records it with the lease, for `pipeline status --db`.
    func whileHolding<T: Sendable>(
        _ claim: SegmentUnitClaim, _ body: @escaping @Sendable (@escaping @Sendable (Double) -> Void) async throws -> T
    )
        async throws -> T

    /// Records that a claimed unit is encoded and in the segment store with `sha256`; throws ``SegmentUnitLost``
    /// when its lease was taken over meanwhile (another worker encodes it now).
    func complete(_ claim: SegmentUnitClaim, size: Int64, sha256: String) async throws

    /// Gives a claimed unit back, unencoded (its encode failed or was interrupted), for any worker to claim.
    func abandon(_ claim: SegmentUnitClaim) async

    /// The states of a plan's units.
    func units(of plan: String) async throws -> [SegmentUnitState]

    /// Queues a done unit again: its encoded file is missing from the segment store or does not match its digest.
    func requeue(_ unit: SegmentUnit, of plan: String) async throws

    /// Removes a plan and its units once they are joined.
    func retire(_ plan: String) async throws
}

/// The key of the ``SegmentFarm`` in ``ServiceValues``.
package enum SegmentFarmKey: ServiceKey {
    /// The farm.
    package typealias Value = any SegmentFarm
}

/// A segmented encode as workers share it: what to encode, with which settings, cut where.
package struct SegmentPlan: Sendable, Hashable, Codable {
    /// Identifies the plan: a digest of everything that decides the units' bytes.
    package var id: String
    /// The source file (at the same path on every worker).
    package var input: String
    /// The encode's settings, as the encoding stage writes and reads them: opaque to the farm.
    package var settings: JSONValue
    /// The encoder threads every unit is encoded with (the output depends on it).
    package var threads: Int
    /// The encoder build the plan was made with (see ``SegmentFarm/encoder``).
    package var encoder: String
    /// The source's duration, which orders claims (the longest sources first).
    package var seconds: Double
    /// The units.
    package var units: [SegmentUnit]

    /// A plan.
    package init(
        id: String, input: String, settings: JSONValue, threads: Int, encoder: String, seconds: Double,
        units: [SegmentUnit]
    ) {
        self.id = id
        self.input = input
        self.settings = settings
        self.threads = threads
        self.encoder = encoder
        self.seconds = seconds
        self.units = units
    }
}

/// One unit of a plan: a time range of the video, or the whole audio.
package struct SegmentUnit: Sendable, Hashable, Codable {
    /// What a unit encodes.
    package enum Kind: String, Sendable, Hashable, Codable {
        /// A time range of the video.
        case video
        /// The whole audio, in one pass.
        case audio
    }

    /// The unit's number within its plan.
    package var index: Int
    /// Video range or audio.
    package var kind: Kind
    /// The range's start, in seconds of the source.
    package var start: Double
    /// The range's end (excluded); nil: to the end of the source.
    package var end: Double?
    /// Seconds of source the unit covers.
    package var seconds: Double

    /// A unit.
    package init(index: Int, kind: Kind, start: Double, end: Double?, seconds: Double) {
        self.index = index
        self.kind = kind
        self.start = start
        self.end = end
        self.seconds = seconds
    }
}

/// A unit as the batch knows it.
package struct SegmentUnitState: Sendable, Hashable {
    /// Where a unit is.
    package enum Status: String, Sendable, Hashable, Codable {
        /// Not claimed, or its claim lapsed.
        case queued
        /// A worker encodes it.
        case running
        /// Encoded and in the segment store.
        case done
    }

    /// The unit.
    package var unit: SegmentUnit
    /// Where it is.
    package var status: Status
    /// The worker that holds it (running) or encoded it (done).
    package var worker: String?
    /// Bytes of the encoded unit (done).
    package var size: Int64?
    /// SHA-256 of the encoded unit (done): the join verifies it.
    package var sha256: String?
    /// How many times it was claimed, takeovers left out (a takeover limit rules those).
    package var attempts: Int
    /// Whether the takeover limit gave it up: the workers encoding it died each time. Its item fails.
    package var abandoned: Bool

    /// Claims a unit gets: one that failed this often on the workers (an input they cannot read, say) is claimed
    /// no more, and its item fails.
    package static let attemptLimit = 5

    /// A unit's state.
    package init(
        unit: SegmentUnit, status: Status, worker: String? = nil, size: Int64? = nil, sha256: String? = nil,
        attempts: Int = 0, abandoned: Bool = false
    ) {
        self.unit = unit
        self.status = status
        self.worker = worker
        self.size = size
        self.sha256 = sha256
        self.attempts = attempts
        self.abandoned = abandoned
    }
}

/// A unit whose lease another worker took over: this worker's encode of it does not count.
package struct SegmentUnitLost: Error, Sendable, CustomStringConvertible {
    /// The unit's plan.
    package var plan: String
    /// The unit.
    package var unit: Int

    /// The unit `unit` of `plan`.
    package init(plan: String, unit: Int) {
        self.plan = plan
        self.unit = unit
    }

    package var description: String {
        "unit \(unit) of segment plan \(plan) was taken over by another worker: its encode here does not count"
    }
}

/// A unit a worker claimed, under a lease whose generation fences its completion.
package struct SegmentUnitClaim: Sendable, Hashable {
    /// The unit's plan.
    package var plan: SegmentPlan
    /// The unit.
    package var unit: SegmentUnit
    /// The lease's generation.
    package var generation: Int64
    /// The worker whose lapsed lease this claim took over, if any.
    package var takenOverFrom: String?
    /// Whether the unit was taken over since it was last given back: the worker encodes it alone.
    package var suspect: Bool

    /// A claim.
    package init(
        plan: SegmentPlan, unit: SegmentUnit, generation: Int64, takenOverFrom: String? = nil, suspect: Bool = false
    ) {
        self.plan = plan
        self.unit = unit
        self.generation = generation
        self.takenOverFrom = takenOverFrom
        self.suspect = suspect
    }
}
