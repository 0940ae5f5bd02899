import Metrics
import NIOConcurrencyHelpers
public import PipelineKit
import StageKit

/// A worker's metrics through swift-metrics (the command line exports them for Prometheus): items done and
/// failed, stage durations, bytes uploaded, queue depth, claim latency, lease takeovers and leases lost.
public final class WorkerMetrics: Sendable {
    private let done = Counter(label: "pipeline_items_done_total")
    private let failed = Counter(label: "pipeline_items_failed_total")
    private let interrupted = Counter(label: "pipeline_items_interrupted_total")
    private let takeovers = Counter(label: "pipeline_lease_takeovers_total")
    private let lost = Counter(label: "pipeline_leases_lost_total")
    private let uploaded = Counter(label: "pipeline_bytes_uploaded_total")
    private let depth = Gauge(label: "pipeline_queue_depth")
    private let claims = Metrics.Timer(label: "pipeline_claim_seconds", preferredDisplayUnit: .seconds)

    /// Metrics reported to the process's metrics system.
    public init() {}

    func finished(_ outcome: ItemOutcome) {
        switch outcome {
        case .done: done.increment()
        case .failed: failed.increment()
        case .interrupted: interrupted.increment()
        case .reused, .skipped: break
        }
    }

    func tookOver() { takeovers.increment() }
    func lostLease() { lost.increment() }
    func queueDepth(_ items: Int) { depth.record(items) }
    func claimed(after latency: Duration) { claims.record(duration: latency) }

    /// A sink that records the stages' durations and the bytes upload stages sent, then passes every event on
    /// to `sink`.
    public func recording(to sink: any RunEventSink) -> any RunEventSink {
        StageMetricsSink(next: sink, uploaded: uploaded)
    }
}

/// Stage durations by stage type, and the bytes of upload stages, from a run's events.
private final class StageMetricsSink: RunEventSink {
    let next: any RunEventSink
    let uploaded: Counter
    /// What is known of each running stage: its type and the bytes it last reported.
    private let running = NIOLockedValueBox<[String: (uses: String, bytes: Int64)]>([:])

    init(next: any RunEventSink, uploaded: Counter) {
        self.next = next
        self.uploaded = uploaded
    }

    func emit(_ event: any RunEvent) {
        switch event {
        case let started as StageStarted:
            running.withLockedValue { $0[Self.key(started.item, started.stage)] = (started.uses, 0) }
        case let progressed as StageProgressed where progressed.progress.unit == .bytes:
            running.withLockedValue {
                $0[Self.key(progressed.item, progressed.stage)]?.bytes = progressed.progress.completed
            }
        case let finished as StageFinished:
            if let stage = running.withLockedValue({ $0.removeValue(forKey: Self.key(finished.item, finished.stage)) })
            {
                Metrics.Timer(
                    label: "pipeline_stage_seconds",
                    dimensions: [("uses", stage.uses), ("outcome", finished.outcome.rawValue)]
                )
                .record(duration: .milliseconds(Int64(finished.seconds * 1000)))
                if stage.uses.hasSuffix(".upload"), finished.outcome == .succeeded {
                    uploaded.increment(by: stage.bytes)
                }
            }
        default:
            break
        }
        next.emit(event)
    }

    private static func key(_ item: String, _ stage: String) -> String { item + "\u{0}" + stage }
}
