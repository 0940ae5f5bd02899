/// Which stages each stage of a workflow waits for: those its `after` names, or, without `after`, the stage
/// before it, so that a workflow written as a chain means what it always meant. Stages whose waits are over
/// may run at the same time; the runner, `pipeline plan` and `validate` read the order from here alone.
public struct StageGraph: Sendable, Hashable {
    /// The stage ids, in workflow order.
    public let ids: [String]
    /// For each stage, by index, the stages it waits for directly (indices, in the order written).
    public let waits: [[Int]]
    /// For each stage, every stage it waits for directly or through others.
    private let ancestors: [Set<Int>]

    /// The graph of `stages`; names in `after` that are not stage ids, and a stage's own, are left out (the loader
    /// reports them).
    public init(_ stages: [StageSpec]) {
        var index: [String: Int] = [:]
        for (position, stage) in stages.enumerated() where index[stage.id] == nil { index[stage.id] = position }
        let waits = stages.enumerated().map { position, stage -> [Int] in
            guard let after = stage.after else { return position > 0 ? [position - 1] : [] }
            var seen: Set<Int> = []
            return after.compactMap { index[$0] }.filter { $0 != position && seen.insert($0).inserted }
        }
        self.init(ids: stages.map(\.id), waits: waits)
    }

    /// A graph of `ids` where stage `i` waits for the stages `waits[i]`.
    init(ids: [String], waits: [[Int]]) {
        self.ids = ids
        self.waits = waits
        ancestors = waits.indices.map { start in
            var reached: Set<Int> = []
            var pending = waits[start]
            while let next = pending.popLast() {
                if reached.insert(next).inserted { pending.append(contentsOf: waits[next]) }
            }
            return reached
        }
    }

    /// The index of a stage id.
    public func index(of id: String) -> Int? {
        ids.firstIndex(of: id)
    }

    /// Whether stage `stage` waits for stage `other`, directly or through others.
    public func waits(_ stage: Int, for other: Int) -> Bool {
        ancestors[stage].contains(other)
    }

    /// The ids of the stages `stage` waits for directly.
    public func waitIDs(of stage: Int) -> [String] {
        waits[stage].map { ids[$0] }
    }

    /// The stages that wait for `stage`, directly or through others, in workflow order.
    public func dependents(of stage: Int) -> [Int] {
        ids.indices.filter { ancestors[$0].contains(stage) }
    }

    /// Whether some stage waits for anything but the stage before it: the workflow has branches.
    public var isBranched: Bool {
        waits.enumerated().contains { position, direct in direct != (position > 0 ? [position - 1] : []) }
    }

    /// A cycle of waits, as the stage indices along it (each waits for the next) with the first repeated at the
    /// end; nil when there is none.
    public var cycle: [Int]? {
        guard let start = ids.indices.first(where: { ancestors[$0].contains($0) }) else { return nil }
        // The shortest way back to `start`, breadth first.
        var cameFrom: [Int: Int] = [:]
        var frontier = [start]
        while !frontier.isEmpty, cameFrom[start] == nil {
            var next: [Int] = []
            for stage in frontier {
                for waited in waits[stage] where cameFrom[waited] == nil {
                    cameFrom[waited] = stage
                    next.append(waited)
                }
            }
            frontier = next
        }
        var trail = [start]
        var current = cameFrom[start] ?? start
        while current != start, trail.count <= ids.count {
            trail.append(current)
            current = cameFrom[current] ?? start
        }
        return (trail + [start]).reversed()
    }

    /// The stages in an order in which each comes after every stage it waits for, otherwise in workflow order;
    /// stages on a cycle come last, in workflow order.
    public var order: [Int] {
        var done: Set<Int> = []
        var order: [Int] = []
        while order.count < ids.count {
            guard let next = ids.indices.first(where: { !done.contains($0) && waits[$0].allSatisfy(done.contains) })
            else {
                order += ids.indices.filter { !done.contains($0) }
                break
            }
            done.insert(next)
            order.append(next)
        }
        return order
    }

    /// The stages as people read them: those that may run at the same time joined by `∥`, each step after the
    /// ones it waits for by `→` (`export → thumbnail ∥ s3 ∥ tus`); a chain reads `a → b → c`.
    public var summary: String {
        var depth: [Int: Int] = [:]
        for stage in order {
            depth[stage] = (waits[stage].compactMap { depth[$0] }.max() ?? -1) + 1
        }
        let levels = Dictionary(grouping: ids.indices) { depth[$0] ?? 0 }
        return levels.keys.sorted().map { level in
            (levels[level] ?? []).map { ids[$0] }.joined(separator: " ∥ ")
        }.joined(separator: " → ")
    }
}
