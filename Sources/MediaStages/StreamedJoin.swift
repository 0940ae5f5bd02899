import Foundation
import NIOConcurrencyHelpers
import StageKit

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

/// The parts of a join in place, for a join that appends them as they arrive: the join waits on its own thread.
final class PartArrivals: @unchecked Sendable {
    // @unchecked: every stored property is guarded by `condition`.
    private let condition = NSCondition()
    private var arrived: Set<Int>
    private var cancelled = false

    init(_ arrived: Set<Int>) {
        self.arrived = arrived
    }

    var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    func add(_ index: Int) {
        condition.lock()
        arrived.insert(index)
        condition.broadcast()
        condition.unlock()
    }

    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until part `index` is in place (true) or the encode stopped (false).
    func wait(for index: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !arrived.contains(index), !cancelled { condition.wait() }
        return !cancelled
    }
}
