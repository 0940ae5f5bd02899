public import PipelineKit
import PostgresNIO
public import StageKit
package import StageRuntime

/// A unit a worker encodes, with the fraction of it encoded so far: what a lease renewal records.
package struct HeldUnit: Sendable, Hashable {
    /// The claim the worker holds.
    package var claim: SegmentUnitClaim
    /// The fraction of the unit encoded, 0 to 1.
    package var progress: Double

    /// A held unit.
    package init(claim: SegmentUnitClaim, progress: Double) {
        self.claim = claim
        self.progress = progress
    }
}

/// An item whose encode is split into units, as `pipeline status --db` shows it.
public struct SegmentSplit: Sendable, Hashable {
    /// The item.
    public var item: Int64
    /// Its path relative to its input folder.
    public var path: String
    /// The plan.
    public var plan: String
    /// Units in all.
    public var units: Int
    /// Units encoded.
    public var done: Int
    /// The fraction of the plan's work encoded: its done units and the encoded part of those being encoded,
    /// weighed by their seconds.
    public var progress: Double
    /// The units a live lease holds, by unit.
    public var encoding: [EncodingUnit]

    /// Units a live lease holds.
    public var running: Int { encoding.count }

    /// The split as `status --db --json` and the dashboard's status API give it.
    public var document: JSONValue {
        [
            "item": .int(Int(item)), "path": .string(path), "plan": .string(plan), "units": .int(units),
            "done": .int(done), "running": .int(running), "progress": .double(progress),
            "encoding": .array(
                encoding.map {
                    ["unit": .int($0.unit), "worker": .string($0.worker), "progress": .double($0.progress)]
                }
            ),
        ]
    }
}

/// A unit being encoded, by whom and how far (as of the last renewal of its lease).
public struct EncodingUnit: Sendable, Hashable {
    /// The unit's index in its plan.
    public var unit: Int
    /// The worker holding its lease.
    public var worker: String
    /// The fraction encoded, 0 to 1.
    public var progress: Double
}

extension SegmentQueue {
    /// The items whose encodes are split, with their units' counts by status and the progress of those being
    /// encoded, for `pipeline status --db`.
    public func splits() async throws(StateError) -> [SegmentSplit] {
        let plans = try await database.rows(
            "read the split items",
            """
            SELECT segment_plans.item, items.relative_path, segment_plans.id, count(*),
                count(*) FILTER (WHERE segment_units.status = 'done'),
                coalesce(sum(CASE WHEN segment_units.status = 'done' THEN segment_units.seconds
                    WHEN segment_units.status = 'running' AND segment_units.lease_expires > now()
                    THEN segment_units.seconds * segment_units.progress ELSE 0 END)
                    / nullif(sum(segment_units.seconds), 0), 0)
            FROM segment_plans JOIN items ON items.id = segment_plans.item
                JOIN segment_units ON segment_units.plan = segment_plans.id
            GROUP BY segment_plans.item, items.relative_path, segment_plans.id ORDER BY segment_plans.item
            """)
        let running = try await database.rows(
            "read the segment units being encoded",
            """
            SELECT plan, unit, lease_owner, progress FROM segment_units
            WHERE status = 'running' AND lease_expires > now() ORDER BY plan, unit
            """)
        return try database.decoding("read the split items") {
            var encoding: [String: [EncodingUnit]] = [:]
            for row in running {
                let (plan, unit, worker, progress) = try row.decode((String, Int32, String?, Double).self)
                encoding[plan, default: []].append(
                    EncodingUnit(unit: Int(unit), worker: worker ?? "", progress: progress))
            }
            return try plans.map { row in
                let (item, path, plan, units, done, progress) = try row.decode(
                    (Int64, String, String, Int64, Int64, Double).self)
                return SegmentSplit(
                    item: item, path: path, plan: plan, units: Int(units), done: Int(done), progress: progress,
                    encoding: encoding[plan] ?? [])
            }
        }
    }
}
