public import Foundation
import NIOConcurrencyHelpers
public import StageKit

/// A running stage as a dashboard in another process shows it: how far it got, at what rate, and when it should end.
public struct RunningStage: Sendable, Hashable {
    /// The item, by its relative path.
    public var item: String
    /// The stage id.
    public var stage: String
    /// When this attempt started.
    public var startedAt: Date
    /// Done so far (0 before the stage's first report).
    public var completed: Int64
    /// The whole, when known.
    public var total: Int64?
    /// What the numbers count.
    public var unit: StageProgress.Unit
    /// Units per second by ``ProgressRate``'s rule, once two reports were a second apart.
    public var rate: Double?
    /// When the stage last reported its progress: a reader tells from it how old the rate and the ETA are.
    public var reportedAt: Date?

    /// Seconds until the stage ends at its rate, when its whole and its rate are known.
    public var etaSeconds: Double? {
        ProgressRate.secondsLeft(completed: completed, total: total, perSecond: rate)
    }

    /// The stage as the dashboard's API and the progress file give it.
    public var document: JSONValue {
        [
            "item": .string(item), "stage": .string(stage), "startedAt": .string(startedAt.formatted(.iso8601)),
            "completed": .int(Int(completed)), "total": total.map { .int(Int($0)) } ?? .null,
            "unit": .string(unit.rawValue),
            "rate": rate.map(JSONValue.double) ?? .null, "etaSeconds": etaSeconds.map(JSONValue.double) ?? .null,
            "reportedAt": reportedAt.map { .string($0.formatted(.iso8601)) } ?? .null,
        ]
    }

    /// A stage read back from its ``document``; nil when the document is not one.
    public init?(document: JSONValue) {
        guard let item = document["item"]?.stringValue, let stage = document["stage"]?.stringValue,
            let started = document["startedAt"]?.stringValue, let startedAt = try? Date(started, strategy: .iso8601)
        else { return nil }
        self.item = item
        self.stage = stage
        self.startedAt = startedAt
        completed = Int64(document["completed"]?.intValue ?? 0)
        total = document["total"]?.intValue.map(Int64.init)
        unit = document["unit"]?.stringValue.flatMap(StageProgress.Unit.init(rawValue:)) ?? .items
        rate = document["rate"]?.doubleValue
        reportedAt = document["reportedAt"]?.stringValue.flatMap { try? Date($0, strategy: .iso8601) }
    }

    init(item: String, stage: String, startedAt: Date) {
        self.item = item
        self.stage = stage
        self.startedAt = startedAt
        completed = 0
        unit = .items
    }
}

/// Keeps the stages running in a run (or a worker) with their progress, from the run's events on their way to
/// `next`, and hands them to `publish` when they change: at once when a stage starts or ends, at most once a
/// second while stages only report progress. A dashboard reads what was published.
public final class ProgressBoard: RunEventSink {
    fileprivate struct Entry {
        var stage: RunningStage
        var rate = ProgressRate()
    }

    /// How often progress alone is published at most.
    static let publishInterval: TimeInterval = 1

    private let next: any RunEventSink
    private let publish: @Sendable ([RunningStage]) -> Void
    private let now: @Sendable () -> Date
    private let state = NIOLockedValueBox<(entries: [String: Entry], published: Date)>(([:], .distantPast))

    /// A board in front of `next`, publishing with `publish` (called under the board's lock, in order); `now` tells
    /// the time of each event.
    public init(
        next: any RunEventSink, now: @escaping @Sendable () -> Date = Date.init,
        publish: @escaping @Sendable ([RunningStage]) -> Void
    ) {
        self.next = next
        self.now = now
        self.publish = publish
    }

    /// The stages running now, the longest running first.
    var running: [RunningStage] {
        state.withLockedValue { Self.sorted($0.entries) }
    }

    public func emit(_ event: any RunEvent) {
        next.emit(event)
        state.withLockedValue { state in
            // Read under the lock, so the times of the reports go forward in the order they are kept.
            let now = self.now()
            let changed: Bool
            switch event {
            case let started as StageStarted:
                let key = Self.key(started.item, started.stage)
                state.entries[key] = Entry(
                    stage: RunningStage(item: started.item, stage: started.stage, startedAt: now))
                changed = true
            case let progressed as StageProgressed:
                guard var entry = state.entries[Self.key(progressed.item, progressed.stage)] else { return }
                entry.record(progressed.progress, at: now)
                state.entries[Self.key(progressed.item, progressed.stage)] = entry
                changed = false
            case let retrying as StageRetrying:
                // The failed attempt's progress is gone; the next attempt starts again from nothing.
                changed = state.entries.removeValue(forKey: Self.key(retrying.item, retrying.stage)) != nil
            case let finished as StageFinished:
                changed = state.entries.removeValue(forKey: Self.key(finished.item, finished.stage)) != nil
            case let finished as ItemFinished:
                // Most items end with no stage on the board (a rerun's reused items): nothing to filter then.
                let before = state.entries.count
                if before > 0 { state.entries = state.entries.filter { $0.value.stage.item != finished.item } }
                changed = state.entries.count != before
            default:
                return
            }
            guard changed || now.timeIntervalSince(state.published) >= Self.publishInterval else { return }
            state.published = now
            publish(Self.sorted(state.entries))
        }
    }

    private static func key(_ item: String, _ stage: String) -> String { item + "\u{0}" + stage }

    private static func sorted(_ entries: [String: Entry]) -> [RunningStage] {
        entries.values.map(\.stage).sorted { ($0.startedAt, $0.item, $0.stage) < ($1.startedAt, $1.item, $1.stage) }
    }
}

extension ProgressBoard.Entry {
    mutating func record(_ progress: StageProgress, at now: Date) {
        stage.completed = progress.completed
        stage.total = progress.total
        stage.unit = progress.unit
        stage.reportedAt = now
        rate.record(progress.completed, at: now)
        stage.rate = rate.perSecond
    }
}
