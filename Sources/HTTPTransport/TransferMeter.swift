import Foundation
public import StageKit
import Synchronization

/// Counts the bytes of a request body the HTTP client has written to the socket: progress for the run's
/// display, the time of the last byte for stall detection, and admission through the run's bandwidth limit.
package final class TransferMeter: Sendable {
    private let base: Int64
    private let total: Int64
    private let limiter: BandwidthLimiter?
    private let report: @Sendable (StageProgress) -> Void
    private let counted = Atomic<Int64>(0)
    private let lastActivity = Atomic<UInt64>(DispatchTime.now().uptimeNanoseconds)
    private let finished = Atomic<Bool>(false)

    /// - Parameters:
    ///   - base: bytes of the file already on the server when this request began.
    ///   - total: the file's size.
    package init(
        base: Int64, total: Int64, limiter: BandwidthLimiter?, report: @escaping @Sendable (StageProgress) -> Void
    ) {
        self.base = base
        self.total = total
        self.limiter = limiter
        self.report = report
    }

    /// Whether the run limits bandwidth: then every part waits for admission.
    package var limitsBandwidth: Bool { limiter != nil }

    /// Waits until the bandwidth limit lets `count` more bytes go.
    package func admit(_ count: Int) async throws {
        try await limiter?.acquire(count)
    }

    /// Records that the HTTP client wrote `count` more bytes.
    package func sent(_ count: Int) {
        let now = counted.add(Int64(count), ordering: .relaxed).newValue
        lastActivity.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
        report(StageProgress(completed: base + now, total: total, unit: .bytes))
    }

    /// Records that the whole body was written: from now on only the response is awaited.
    package func bodyFinished() {
        finished.store(true, ordering: .relaxed)
        lastActivity.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
    }

    /// Bytes written so far by this request.
    package var bytesSent: Int64 { counted.load(ordering: .relaxed) }

    /// Whether the body has been written completely.
    package var isBodyFinished: Bool { finished.load(ordering: .relaxed) }

    /// Seconds since the last byte (or since the body finished).
    package var idleSeconds: Double {
        Double(DispatchTime.now().uptimeNanoseconds &- lastActivity.load(ordering: .relaxed)) / 1e9
    }
}

/// A token bucket shared by every upload of a run (`--bwlimit`): bytes per second across all of them.
public actor BandwidthLimiter {
    private let bytesPerSecond: Double
    private var available: Double
    private var updated = ContinuousClock.now

    /// A limit of `bytesPerSecond`, with bursts of up to a quarter second's worth.
    public init(bytesPerSecond: Int64) {
        self.bytesPerSecond = Double(max(1, bytesPerSecond))
        self.available = Double(max(1, bytesPerSecond)) / 4
    }

    /// Waits until `count` bytes may be sent.
    public func acquire(_ count: Int) async throws {
        refill()
        available -= Double(count)
        if available < 0 {
            try await Task.sleep(for: .milliseconds(Int64(-available / bytesPerSecond * 1000)))
        }
    }

    private func refill() {
        let now = ContinuousClock.now
        available = min(bytesPerSecond / 4, available + (now - updated).seconds * bytesPerSecond)
        updated = now
    }
}

/// The run's bandwidth limit in ``StageContext/services``.
public enum BandwidthLimitKey: ServiceKey {
    public typealias Value = BandwidthLimiter
}
