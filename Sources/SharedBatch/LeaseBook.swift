import NIOConcurrencyHelpers

/// The leases a worker holds: for each item it works on, the lease generation it claimed it with. Its store's
/// writes carry the generation as a fencing token; a write or a heartbeat that finds the lease taken over marks it
/// lost, and the item's work stops.
public final class LeaseBook: Sendable {
    private struct Leases {
        var held: [Int64: Int64] = [:]
        var lost: Set<Int64> = []
    }

    private let leases = NIOLockedValueBox(Leases())

    /// An empty book.
    public init() {}

    /// Records a lease the worker claimed.
    public func hold(_ item: Int64, generation: Int64) {
        leases.withLockedValue { leases in
            leases.held[item] = generation
            leases.lost.remove(item)
        }
    }

    /// Records that another worker took `item` over: no more writes for it.
    public func lose(_ item: Int64) {
        leases.withLockedValue { leases in
            if leases.held.removeValue(forKey: item) != nil { leases.lost.insert(item) }
        }
    }

    /// Forgets the lease on `item` once its work ended; returns whether it had been lost meanwhile.
    @discardableResult
    public func release(_ item: Int64) -> Bool {
        leases.withLockedValue { leases in
            leases.held.removeValue(forKey: item)
            return leases.lost.remove(item) != nil
        }
    }

    /// The generation of the lease on `item`, nil when the worker holds none (or lost it).
    public func generation(of item: Int64) -> Int64? {
        leases.withLockedValue { $0.held[item] }
    }

    /// Every lease held, by item.
    public var all: [Int64: Int64] {
        leases.withLockedValue { $0.held }
    }
}
