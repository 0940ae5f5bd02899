import Foundation
import NIOConcurrencyHelpers
import StageKit
import StageRuntime

extension JoinGate {
    /// The gate of a join (or a remux) whose output a stage streams (``ExportStream``): the stream opens with the
    /// first bytes that are final, once per attempt (a retried attempt writes a new file), and advances as the
    /// file grows. With `arrivals`, part `i` is appended only once it is in place, and the join stops when they
    /// are cancelled (the encode that makes the parts failed).
    static func streaming(
        _ stream: ExportStream, destination: String, writing: String, arrivals: PartArrivals? = nil
    ) -> JoinGate {
        let opened = NIOLockedValueBox(false)
        return JoinGate { passage, head, final in
            switch passage {
            case .beforePart(let index):
                if index > 0 { stream.advance(to: final) }
                return arrivals?.wait(for: index) ?? true
            case .progressed:
                let first = opened.withLockedValue { isOpen in
                    defer { isOpen = true }
                    return !isOpen
                }
                if first { stream.open(destination: destination, writing: writing, head: head) }
                stream.advance(to: final)
            case .rewritten:
                stream.rewrite()
            }
            return !(arrivals?.isCancelled ?? false)
        }
    }
}

/// Runs `encode` and, beside it, `join`, which appends each part once `arrivals` has it in place; returns what
/// both return. Either failing stops the other. When the encode fails, the join stops with a cancellation: the
/// encode's error is the one thrown, so that the stage fails with its reason instead of looking interrupted.
func joinBeside<Encoded: Sendable>(
    arrivals: PartArrivals, encode: @escaping @Sendable () async throws -> Encoded,
    join: @escaping @Sendable () async throws -> TranscodeReport
) async throws -> (Encoded, TranscodeReport) {
    try await withThrowingTaskGroup(of: BesideJoin<Encoded>.self) { group in
        group.addTask {
            do {
                return .encoded(try await encode())
            } catch {
                arrivals.cancel(because: error)
                throw error
            }
        }
        group.addTask { .joined(try await join()) }
        var encoded: Encoded?
        var joined: TranscodeReport?
        do {
            while let finished = try await group.next() {
                switch finished {
                case .encoded(let value): encoded = value
                case .joined(let report): joined = report
                }
            }
        } catch {
            arrivals.cancel(because: error)
            throw arrivals.cause ?? error
        }
        guard let encoded, let joined else { throw CancellationError() }
        return (encoded, joined)
    }
}

/// What one side of ``joinBeside(arrivals:encode:join:)`` ended with.
private enum BesideJoin<Encoded: Sendable>: Sendable {
    case encoded(Encoded)
    case joined(TranscodeReport)
}

/// The parts of a join in place, for a join that appends them as they arrive. The join's own thread waits with
/// ``wait(for:)``; a task waits with ``arrival(of:)``, which holds no thread.
final class PartArrivals: @unchecked Sendable {
    // @unchecked: every stored property is guarded by `condition`.
    private let condition = NSCondition()
    private var arrived: Set<Int>
    private var cancelled: (any Error)?
    private var waiting: [Int: [CheckedContinuation<Bool, Never>]] = [:]

    init(_ arrived: Set<Int>) {
        self.arrived = arrived
    }

    var isCancelled: Bool { cause != nil }

    /// Why the parts stopped coming: the first error given to ``cancel(because:)``.
    var cause: (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    func add(_ index: Int) {
        condition.lock()
        arrived.insert(index)
        let resumed = waiting.removeValue(forKey: index) ?? []
        condition.broadcast()
        condition.unlock()
        for continuation in resumed { continuation.resume(returning: true) }
    }

    /// No more parts come, because of `error` (the first cause is kept).
    func cancel(because error: any Error) {
        condition.lock()
        cancelled = cancelled ?? error
        let resumed = waiting.values.flatMap { $0 }
        waiting = [:]
        condition.broadcast()
        condition.unlock()
        for continuation in resumed { continuation.resume(returning: false) }
    }

    /// Blocks until part `index` is in place (true) or the parts stopped coming (false).
    func wait(for index: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !arrived.contains(index), cancelled == nil { condition.wait() }
        return cancelled == nil
    }

    /// Suspends until part `index` is in place (true) or the parts stopped coming (false).
    func arrival(of index: Int) async -> Bool {
        await withCheckedContinuation { continuation in
            condition.lock()
            if cancelled != nil || arrived.contains(index) {
                let inPlace = cancelled == nil
                condition.unlock()
                continuation.resume(returning: inPlace)
                return
            }
            waiting[index, default: []].append(continuation)
            condition.unlock()
        }
    }
}
