import Foundation

/// What a stage reports while it works.
public struct StageProgress: Sendable, Hashable {
    /// What the numbers count.
    public enum Unit: String, Sendable, Hashable {
        case bytes, seconds, items
    }

    /// Done so far.
    public var completed: Int64
    /// The whole, when known.
    public var total: Int64?
    /// What is counted.
    public var unit: Unit

    /// Creates a progress report.
    public init(completed: Int64, total: Int64?, unit: Unit) {
        self.completed = completed
        self.total = total
        self.unit = unit
    }
}

/// How a stage ended in this run.
public enum StageOutcome: String, Sendable, Hashable {
    /// It ran and succeeded.
    case succeeded
    /// A checkpoint from an earlier run already had it done: it did not run.
    case reused
    /// Its `if` condition was false.
    case skipped
    /// It failed after its attempts.
    case failed
    /// A signal stopped it; the next run resumes it.
    case interrupted
}

/// Everything a run reports, for the terminal display, plain logs and `--json` lines.
public enum RunEvent: Sendable {
    case runStarted(workflow: String, items: Int, stages: Int)
    case itemStarted(item: String)
    case stageStarted(item: String, stage: String, uses: String, attempt: Int)
    case stageProgress(item: String, stage: String, progress: StageProgress)
    case stageRetrying(item: String, stage: String, attempt: Int, delay: Duration, error: String)
    case stageFinished(item: String, stage: String, outcome: StageOutcome, seconds: Double, error: String?)
    /// `landed`: where the item's result is, when its last stage says (a link, URL, location or path).
    case itemFinished(item: String, succeeded: Bool, error: String?, landed: String?)
    case log(level: String, item: String?, stage: String?, message: String)
    case runFinished(RunSummary)

    /// The event as one JSON object (a `--json` line).
    public var json: JSONValue {
        var fields: [String: JSONValue]
        switch self {
        case .runStarted(let workflow, let items, let stages):
            fields = ["event": "runStarted", "workflow": .string(workflow), "items": .int(items), "stages": .int(stages)]
        case .itemStarted(let item):
            fields = ["event": "itemStarted", "item": .string(item)]
        case .stageStarted(let item, let stage, let uses, let attempt):
            fields = ["event": "stageStarted", "item": .string(item), "stage": .string(stage), "uses": .string(uses), "attempt": .int(attempt)]
        case .stageProgress(let item, let stage, let progress):
            fields = [
                "event": "stageProgress", "item": .string(item), "stage": .string(stage),
                "completed": .int(Int(progress.completed)), "total": progress.total.map { .int(Int($0)) } ?? .null,
                "unit": .string(progress.unit.rawValue),
            ]
        case .stageRetrying(let item, let stage, let attempt, let delay, let error):
            fields = [
                "event": "stageRetrying", "item": .string(item), "stage": .string(stage), "attempt": .int(attempt),
                "delaySeconds": .double(delay.seconds), "error": .string(error),
            ]
        case .stageFinished(let item, let stage, let outcome, let seconds, let error):
            fields = [
                "event": "stageFinished", "item": .string(item), "stage": .string(stage),
                "outcome": .string(outcome.rawValue), "seconds": .double(seconds), "error": error.map(JSONValue.string) ?? .null,
            ]
        case .itemFinished(let item, let succeeded, let error, let landed):
            fields = [
                "event": "itemFinished", "item": .string(item), "succeeded": .bool(succeeded),
                "error": error.map(JSONValue.string) ?? .null, "landed": landed.map(JSONValue.string) ?? .null,
            ]
        case .log(let level, let item, let stage, let message):
            fields = [
                "event": "log", "level": .string(level), "item": item.map(JSONValue.string) ?? .null,
                "stage": stage.map(JSONValue.string) ?? .null, "message": .string(message),
            ]
        case .runFinished(let summary):
            fields = [
                "event": "runFinished", "items": .int(summary.items), "succeeded": .int(summary.succeeded),
                "failed": .int(summary.failed), "interrupted": .bool(summary.interrupted),
                "stagesRun": .int(summary.stagesRun), "stagesReused": .int(summary.stagesReused),
                "seconds": .double(summary.seconds),
            ]
        }
        fields["time"] = .string(Date().formatted(.iso8601))
        return .object(fields)
    }
}

/// The totals of a run.
public struct RunSummary: Sendable, Hashable {
    /// Items in the run.
    public var items: Int
    /// Items whose every stage succeeded or was skipped.
    public var succeeded: Int
    /// Items that failed.
    public var failed: Int
    /// Whether a signal stopped the run.
    public var interrupted: Bool
    /// Stages that ran in this run.
    public var stagesRun: Int
    /// Stages whose checkpoint was reused.
    public var stagesReused: Int
    /// Wall time.
    public var seconds: Double
}

/// Receives a run's events; called from many tasks at once.
public protocol RunEventSink: Sendable {
    /// Handles one event.
    func emit(_ event: RunEvent)
}

extension Duration {
    /// The duration in seconds.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
