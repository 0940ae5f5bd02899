import Foundation
public import Logging
public import StageKit

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

/// A failure as events, state and reports carry it: the message for people and the kind for machines.
public struct FailureReport: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What went wrong (secrets redacted).
    public var message: String
    /// What kind of failure it is.
    public var kind: ErrorKind

    /// Creates a report.
    public init(message: String, kind: ErrorKind) {
        self.message = message
        self.kind = kind
    }

    public var description: String { message }

    /// The same failure with context around its message.
    func prefixed(_ prefix: String, advice: String = "") -> FailureReport {
        FailureReport(message: prefix + message + advice, kind: kind)
    }
}

/// Something a run reports, for the terminal display, plain logs and `--json` lines.
///
/// Each kind of event is a type of its own (``StageFinished``, ``ItemFinished``, …); a sink picks the ones
/// it shows with `if let` or `switch … case let e as StageFinished`, and ignores the rest, so adding a
/// kind of event breaks no sink.
public protocol RunEvent: Sendable {
    /// The event's name in `--json` lines (`"stageFinished"`).
    static var name: String { get }
    /// The event's members in `--json` lines, besides `event` and `time`.
    var fields: [String: JSONValue] { get }
}

extension RunEvent {
    /// The event as one JSON object (a `--json` line).
    public var json: JSONValue {
        var fields = self.fields
        fields["event"] = .string(Self.name)
        fields["time"] = .string(Date().formatted(.iso8601))
        return .object(fields)
    }
}

/// A run started.
public struct RunStarted: RunEvent {
    public static let name = "runStarted"
    /// The workflow's name.
    public var workflow: String
    /// Items in the run.
    public var items: Int
    /// Stages per item.
    public var stages: Int

    public var fields: [String: JSONValue] {
        ["workflow": .string(workflow), "items": .int(items), "stages": .int(stages)]
    }
}

/// An item started.
public struct ItemStarted: RunEvent {
    public static let name = "itemStarted"
    /// The item, by its relative path.
    public var item: String

    public var fields: [String: JSONValue] { ["item": .string(item)] }
}

/// An attempt of a stage started.
public struct StageStarted: RunEvent {
    public static let name = "stageStarted"
    /// The item.
    public var item: String
    /// The stage id.
    public var stage: String
    /// The stage type.
    public var uses: String
    /// The attempt, from 1.
    public var attempt: Int
    /// The attempts its retry policy allows.
    public var attempts: Int
    /// The stages it waited for (the one before it, or those its `after` names): stages started while others
    /// run are branches of the item.
    public var after: [String] = []

    public var fields: [String: JSONValue] {
        [
            "item": .string(item), "stage": .string(stage), "uses": .string(uses), "attempt": .int(attempt),
            "attempts": .int(attempts), "after": .array(after.map(JSONValue.string)),
        ]
    }
}

/// A stage reported progress (at most five times a second per stage, and always the final report).
public struct StageProgressed: RunEvent {
    public static let name = "stageProgress"
    /// The item.
    public var item: String
    /// The stage id.
    public var stage: String
    /// How far it got.
    public var progress: StageProgress

    public var fields: [String: JSONValue] {
        [
            "item": .string(item), "stage": .string(stage), "completed": .int(Int(progress.completed)),
            "total": progress.total.map { .int(Int($0)) } ?? .null, "unit": .string(progress.unit.rawValue),
        ]
    }
}

/// An attempt of a stage failed and the stage will be tried again after a delay.
public struct StageRetrying: RunEvent {
    public static let name = "stageRetrying"
    /// The item.
    public var item: String
    /// The stage id.
    public var stage: String
    /// The attempt that failed, from 1.
    public var attempt: Int
    /// The attempts its retry policy allows.
    public var attempts: Int
    /// The wait before the next attempt.
    public var delay: Duration
    /// Why the attempt failed.
    public var error: FailureReport

    public var fields: [String: JSONValue] {
        [
            "item": .string(item), "stage": .string(stage), "attempt": .int(attempt), "attempts": .int(attempts),
            "delaySeconds": .double(delay.seconds), "error": .string(error.message),
            "errorKind": .string(error.kind.rawValue),
        ]
    }
}

/// A stage ended in this run: it ran, was reused from a checkpoint, was skipped, failed or was interrupted.
public struct StageFinished: RunEvent {
    public static let name = "stageFinished"
    /// The item.
    public var item: String
    /// The stage id.
    public var stage: String
    /// How it ended.
    public var outcome: StageOutcome
    /// How long its last attempt took.
    public var seconds: Double
    /// Why it failed, or why it was skipped.
    public var reason: String?
    /// The failure, when it failed.
    public var error: FailureReport?
    /// The stage that failed, when it was skipped because it waits for that stage.
    public var failedDependency: String?

    public var fields: [String: JSONValue] {
        [
            "item": .string(item), "stage": .string(stage), "outcome": .string(outcome.rawValue),
            "seconds": .double(seconds), "reason": reason.map(JSONValue.string) ?? .null,
            "error": error.map { .string($0.message) } ?? .null,
            "errorKind": error.map { .string($0.kind.rawValue) } ?? .null,
            "failedDependency": failedDependency.map(JSONValue.string) ?? .null,
        ]
    }
}

/// An item ended in this run.
public struct ItemFinished: RunEvent {
    public static let name = "itemFinished"
    /// The item's relative path.
    public var item: String
    /// What happened to it.
    public var outcome: ItemOutcome
    /// Why it was reused or skipped.
    public var reason: String?
    /// Why it failed.
    public var error: FailureReport?
    /// Where its result landed (a URL or a path), when it is done.
    public var landed: String?

    /// Creates the event.
    public init(
        item: String, outcome: ItemOutcome, reason: String? = nil, error: FailureReport? = nil, landed: String? = nil
    ) {
        self.item = item
        self.outcome = outcome
        self.reason = reason
        self.error = error
        self.landed = landed
    }

    /// Whether the item is done (now or earlier).
    public var succeeded: Bool { outcome == .done || outcome == .reused }

    public var fields: [String: JSONValue] {
        [
            "item": .string(item), "outcome": .string(outcome.rawValue), "succeeded": .bool(succeeded),
            "interrupted": .bool(outcome == .interrupted), "reason": reason.map(JSONValue.string) ?? .null,
            "error": error.map { .string($0.message) } ?? .null,
            "errorKind": error.map { .string($0.kind.rawValue) } ?? .null,
            "landed": landed.map(JSONValue.string) ?? .null,
        ]
    }
}

/// A log line of a stage or of the engine.
public struct LogLine: RunEvent {
    public static let name = "log"
    /// How much the line matters; `--json` writes swift-log's name for it (`notice`, `warning`, …).
    public var level: Logger.Level
    /// The item, when the line is about one.
    public var item: String?
    /// The stage, when a stage wrote it.
    public var stage: String?
    /// The line (secrets redacted).
    public var message: String

    /// Creates a line.
    public init(level: Logger.Level, item: String?, stage: String?, message: String) {
        self.level = level
        self.item = item
        self.stage = stage
        self.message = message
    }

    public var fields: [String: JSONValue] {
        [
            "level": .string(level.rawValue), "item": item.map(JSONValue.string) ?? .null,
            "stage": stage.map(JSONValue.string) ?? .null, "message": .string(message),
        ]
    }
}

/// A run ended.
public struct RunFinished: RunEvent {
    public static let name = "runFinished"
    /// Its totals.
    public var summary: RunSummary

    public var fields: [String: JSONValue] { summary.fields }
}

/// Receives a run's events; called from many tasks at once.
public protocol RunEventSink: Sendable {
    /// Handles one event.
    func emit(_ event: any RunEvent)
}
