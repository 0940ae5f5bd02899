import NIOConcurrencyHelpers
import StageKit

/// Bytes sent over all parts in flight, for the stage's progress.
final class PartsProgress: Sendable {
    private let base: Int64
    private let total: Int64
    private let report: @Sendable (StageProgress) -> Void
    private let sent = NIOLockedValueBox<[Int: Int64]>([:])

    init(base: Int64, total: Int64, report: @escaping @Sendable (StageProgress) -> Void) {
        self.base = base
        self.total = total
        self.report = report
    }

    /// Records that part `number` has sent `bytes` so far (a retried part starts again from 0).
    func update(part number: Int, bytes: Int64) {
        let now = sent.withLockedValue { parts -> Int64 in
            parts[number] = bytes
            return parts.values.reduce(0, +)
        }
        report(StageProgress(completed: min(total, base + now), total: total, unit: .bytes))
    }
}
