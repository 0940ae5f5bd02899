import Foundation
public import PipelineKit
public import StageKit

/// What a notification announces.
public enum Notice: Sendable, Hashable {
    /// A batch ended: its counts (under the status API's names) and its first failures.
    case batchFinished(workflow: String, counts: [String: Int], failures: [FailedItem])
    /// An item failed.
    case itemFailed(workflow: String, item: FailedItem)

    /// A failed item as a notification names it.
    public struct FailedItem: Sendable, Hashable {
        /// The item's path.
        public var path: String
        /// Its error message (secrets redacted, as everywhere).
        public var error: String
        /// Its error kind.
        public var errorKind: String

        /// A failed item.
        public init(path: String, error: String, errorKind: String) {
            self.path = path
            self.error = error
            self.errorKind = errorKind
        }
    }

    /// The event it is.
    public var event: NotificationEvent {
        switch self {
        case .batchFinished: .batchFinished
        case .itemFailed: .itemFailed
        }
    }

    /// How many failures a summary lists.
    public static let summaryFailures = 5

    /// The request body for a receiver of `format`.
    public func body(for format: NotificationTarget.Format) -> JSONValue {
        switch format {
        case .generic: generic
        case .slack: ["text": .string(text)]
        case .discord: ["content": .string(String(text.prefix(2000)))]
        }
    }

    /// The generic JSON webhook shape.
    private var generic: JSONValue {
        let time = JSONValue.string(Date().formatted(.iso8601))
        switch self {
        case .batchFinished(let workflow, let counts, let failures):
            return [
                "event": "batchFinished", "workflow": .string(workflow), "time": time,
                "counts": .object(counts.mapValues { .int($0) }),
                "failures": .array(failures.map(Self.json)),
            ]
        case .itemFailed(let workflow, let item):
            var fields = Self.json(item)
            if case .object(var members) = fields {
                members["event"] = "itemFailed"
                members["workflow"] = .string(workflow)
                members["time"] = time
                fields = .object(members)
            }
            return fields
        }
    }

    private static func json(_ item: FailedItem) -> JSONValue {
        ["path": .string(item.path), "error": .string(item.error), "errorKind": .string(item.errorKind)]
    }

    /// The message for people (Slack, Discord).
    var text: String {
        switch self {
        case .batchFinished(let workflow, let counts, let failures):
            let shown = ["done", "failed", "cancelled", "interrupted", "skipped"].compactMap { name in
                counts[name].flatMap { $0 > 0 ? "\($0) \(name)" : nil }
            }
            var lines = [
                "Batch \(workflow) finished: \(shown.isEmpty ? "nothing to do" : shown.joined(separator: ", "))"
            ]
            lines += failures.map { "• \($0.path): \($0.error) (\($0.errorKind))" }
            return lines.joined(separator: "\n")
        case .itemFailed(let workflow, let item):
            return "\(workflow): \(item.path) failed: \(item.error) (\(item.errorKind))"
        }
    }
}
