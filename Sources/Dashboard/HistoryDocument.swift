import Foundation
import PipelineKit
import StageKit

/// An item's history as the API serves it (`GET /api/items/:id/history`): its versions, oldest first, each with its
/// stages and each stage's attempts, oldest first. An attempt that did not simply succeed comes from the ledger's
/// record of it (``StageAttempt``); the stage's last attempt from its checkpoint, unless that attempt is recorded.
/// Errors and log lines are masked as ``ItemDocument`` masks them.
enum HistoryDocument {
    /// The history of `item` of `workflow`, its stages in the workflow's `order`.
    static func document(_ history: ItemHistory, item: LedgerItem, workflow: String, order: [String]) -> JSONValue {
        let current = history.checkpoints[item.version] ?? []
        return [
            "id": .int(Int(item.id)), "workflow": .string(workflow), "relativePath": .string(item.input.relativePath),
            "version": .int(item.version),
            "versions": .array(
                history.versions.map { version in
                    self.version(version, history: history, order: order, current: version.version == item.version)
                }),
            "links": .array(ItemDocument.links(Dictionary(current.map { ($0.stage, $0) }) { first, _ in first })),
        ]
    }

    private static func version(
        _ version: ItemHistory.Version, history: ItemHistory, order: [String], current: Bool
    ) -> JSONValue {
        let records = history.checkpoints[version.version] ?? []
        let attempts = history.attempts.filter { $0.version == version.version }
        let checkpoints = Dictionary(records.map { ($0.stage, $0) }) { first, _ in first }
        // A stage with recorded attempts and no checkpoint (removed when an earlier stage ran again) still shows them.
        var tried: [String] = []
        for attempt in attempts where checkpoints[attempt.stage] == nil && !tried.contains(attempt.stage) {
            tried.append(attempt.stage)
        }
        let stages = ItemDocument.inOrder(checkpoints, order).map { record in
            stage(id: record.stage, record: record, attempts: attempts.filter { $0.stage == record.stage })
        }
        return [
            "version": .int(version.version), "path": .string(version.path),
            "createdAt": .string(version.createdAt.formatted(.iso8601)), "current": .bool(current),
            "stages": .array(
                stages + tried.map { id in stage(id: id, record: nil, attempts: attempts.filter { $0.stage == id }) }),
        ]
    }

    /// A stage with its attempts: the recorded ones, then its checkpoint's own when that one is not among them.
    private static func stage(id: String, record: StageRecord?, attempts: [StageAttempt]) -> JSONValue {
        var rows = attempts.map(row)
        if let record, !attempts.contains(where: { recorded(record, as: $0) }) { rows.append(row(record)) }
        return [
            "id": .string(id), "uses": record.map { .string($0.uses) } ?? .null,
            "status": record.map { .string($0.status.rawValue) } ?? .null,
            "startedAt": date(record?.startedAt), "finishedAt": date(record?.finishedAt),
            "seconds": seconds(record), "attempts": .array(rows),
        ]
    }

    /// Whether `record`'s last attempt is `attempt`: only an attempt that did not succeed is recorded, and its
    /// number alone does not name it (it starts again at 1 when the stage's options change), its start with it does
    /// (both kept to the second).
    private static func recorded(_ record: StageRecord, as attempt: StageAttempt) -> Bool {
        guard record.status == .failed || record.status == .interrupted, let start = record.startedAt else {
            return false
        }
        return attempt.attempt == record.attempts
            && Int(start.timeIntervalSince1970) == Int(attempt.startedAt.timeIntervalSince1970)
    }

    private static func row(_ attempt: StageAttempt) -> JSONValue {
        [
            "attempt": .int(attempt.attempt), "outcome": .string(attempt.outcome.rawValue),
            "startedAt": date(attempt.startedAt), "finishedAt": date(attempt.finishedAt),
            "seconds": .double(attempt.seconds),
            "error": attempt.error.map { .string(ItemDocument.mask(text: $0)) } ?? .null,
            "errorKind": attempt.errorKind.map { .string($0.rawValue) } ?? .null,
            "worker": attempt.worker.map(JSONValue.string) ?? .null,
            "log": .array(attempt.log.map { .string(ItemDocument.mask(text: $0)) }),
        ]
    }

    /// The attempt a checkpoint holds: its last (or the one running), with the lines it logged when it succeeded
    /// (a failed one's are in its recorded attempt).
    private static func row(_ record: StageRecord) -> JSONValue {
        [
            "attempt": .int(record.attempts), "outcome": .string(record.status.rawValue),
            "startedAt": date(record.startedAt), "finishedAt": date(record.finishedAt), "seconds": seconds(record),
            "error": record.error.map { .string(ItemDocument.mask(text: $0)) } ?? .null,
            "errorKind": record.errorKind.map { .string($0.rawValue) } ?? .null, "worker": .null,
            "log": .array((record.log ?? []).map { .string(ItemDocument.mask(text: $0)) }),
        ]
    }

    private static func date(_ date: Date?) -> JSONValue {
        date.map { .string($0.formatted(.iso8601)) } ?? .null
    }

    /// How long a stage's last attempt took: kept to the millisecond, or its times' difference in an older checkpoint.
    private static func seconds(_ record: StageRecord?) -> JSONValue {
        guard let record else { return .null }
        if let seconds = record.seconds { return .double(seconds) }
        guard let start = record.startedAt, let end = record.finishedAt else { return .null }
        return .double(end.timeIntervalSince(start))
    }
}
