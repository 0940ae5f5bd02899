import NIOConcurrencyHelpers
public import StageKit
import StageRuntime

/// How many stages may use each resource at once (`--cpu-jobs`, `--transfers`); a resource without a limit
/// is bounded only by the items running at once (`--jobs`).
public struct ResourceLimits: Sendable, Hashable {
    /// Stages at once per resource.
    public var limits: [StageResource: Int]

    /// Limits for these resources.
    public init(_ limits: [StageResource: Int] = [:]) {
        self.limits = limits
    }

    /// The default number of encodes at once: one per four cores, at least one, since each encode already
    /// spreads over every core through its own threads.
    public static func defaultCPUJobs(cores: Int) -> Int {
        max(1, cores / 4)
    }

    /// The default number of transfers at once (rclone's).
    public static let defaultTransfers = 4
}

/// Slots for the stages of one run: a stage waits (suspended, without a thread) for a slot of its resource
/// before it starts an attempt, and gives it back when the attempt ends, so an upload never waits behind an
/// encode and encodes never outnumber what the cores can take. Runners given the same slots share the limits.
public final class ResourceSlots: Sendable {
    /// Stages at once per resource.
    public let limits: ResourceLimits
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Bool, any Error>
    }

    private struct Pool {
        var free: Int
        var waiters: [Waiter] = []
    }

    private let pools: NIOLockedValueBox<[StageResource: Pool]>
    private let nextID = NIOLockedValueBox<UInt64>(0)

    /// Slots for these limits.
    public init(_ limits: ResourceLimits) {
        self.limits = limits
        pools = NIOLockedValueBox(limits.limits.mapValues { Pool(free: max(1, $0)) })
    }

    /// Runs `body` holding a slot of `resource` (a worker's encode of another item's segment takes a CPU slot as
    /// a stage does); waits for one first. Throws `CancellationError` when the task is cancelled while it waits.
    public func withSlot<T: Sendable>(_ resource: StageResource, _ body: () async throws -> T) async throws -> T {
        try await holding(resource) { _ in try await body() }
    }

    /// Runs `body` holding a slot of `resource`, which it may give up for a while (nil when `resource` has no
    /// limit); waits for one first. Throws `CancellationError` when the task is cancelled while it waits.
    func holding<T: Sendable>(_ resource: StageResource, _ body: ((any StageSlot)?) async throws -> T)
        async throws -> T
    {
        guard try await acquire(resource) else { return try await body(nil) }
        let slot = HeldSlot(resource: resource, slots: self)
        defer { slot.giveBack() }
        return try await body(slot)
    }

    /// The free slots of `resource`; nil when it has no limit.
    func available(_ resource: StageResource) -> Int? {
        pools.withLockedValue { $0[resource]?.free }
    }

    /// Takes a slot; false when the resource has no limit.
    fileprivate func acquire(_ resource: StageResource) async throws -> Bool {
        let id = nextID.withLockedValue { value -> UInt64 in
            value += 1
            return value
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                let resumeNow: Result<Bool, any Error>? = pools.withLockedValue { pools in
                    guard var pool = pools[resource] else { return .success(false) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if pool.free > 0 {
                        pool.free -= 1
                        pools[resource] = pool
                        return .success(true)
                    }
                    pool.waiters.append(Waiter(id: id, continuation: continuation))
                    pools[resource] = pool
                    return nil
                }
                switch resumeNow {
                case .success(let limited): continuation.resume(returning: limited)
                case .failure(let error): continuation.resume(throwing: error)
                case nil: break
                }
            }
        } onCancel: {
            let cancelled = pools.withLockedValue { pools -> CheckedContinuation<Bool, any Error>? in
                guard var pool = pools[resource], let index = pool.waiters.firstIndex(where: { $0.id == id }) else {
                    return nil
                }
                let waiter = pool.waiters.remove(at: index)
                pools[resource] = pool
                return waiter.continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    fileprivate func release(_ resource: StageResource) {
        let next = pools.withLockedValue { pools -> CheckedContinuation<Bool, any Error>? in
            guard var pool = pools[resource] else { return nil }
            defer { pools[resource] = pool }
            guard !pool.waiters.isEmpty else {
                pool.free += 1
                return nil
            }
            return pool.waiters.removeFirst().continuation
        }
        next?.resume(returning: true)
    }
}

extension ServiceValues {
    /// These services with `slot` as the running stage's ``StageSlot``.
    func holding(_ slot: (any StageSlot)?) -> ServiceValues {
        var services = self
        services[StageSlotKey.self] = slot
        return services
    }
}

/// A slot a running stage holds and may give up while it waits on other machines.
private final class HeldSlot: StageSlot {
    let resource: StageResource
    let slots: ResourceSlots
    private let held = NIOLockedValueBox(true)

    init(resource: StageResource, slots: ResourceSlots) {
        self.resource = resource
        self.slots = slots
    }

    func released<T: Sendable>(during body: () async throws -> T) async throws -> T {
        giveBack()
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        _ = try await slots.acquire(resource)
        held.withLockedValue { $0 = true }
        return try result.get()
    }

    /// Releases the slot unless it is given up already.
    func giveBack() {
        let wasHeld = held.withLockedValue { held in
            defer { held = false }
            return held
        }
        if wasHeld { slots.release(resource) }
    }
}
