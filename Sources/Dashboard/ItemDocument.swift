import Foundation
import PipelineKit
import StageKit

/// Items as the API serves them: what a person needs to see, never a secret. The ledger already holds secrets
/// as their expressions (`${env.TOKEN}`); on top of that, a stage's options and resume data are not served at
/// all, outputs whose name says they are secret are masked, and URLs lose their query (presigned signatures).
enum ItemDocument {
    /// An item of a list, with its failed or running stage when `stages` has one; its stages in the workflow's `order` (the
    /// stage ids as its last run declared them), then any the workflow no longer has, in the order they started.
    static func summary(
        _ item: LedgerItem, workflow: String, stages: [String: StageRecord]?, order: [String] = []
    ) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .int(Int(item.id)), "workflow": .string(workflow), "path": .string(item.input.path),
            "relativePath": .string(item.input.relativePath), "version": .int(item.version),
            "status": .string(StatusDocument.name(of: item.status)), "size": .int(Int(item.input.size)),
            "updatedAt": .string(item.updatedAt.formatted(.iso8601)),
            "error": item.error.map { .string(mask(text: $0.message)) } ?? .null,
            "errorKind": item.error.map { .string($0.kind.rawValue) } ?? .null,
        ]
        if let stages {
            // The stage it failed in, or the one it runs (as a list's stage filter matches it).
            let failed = stages.values.first { $0.status == .failed }
            let running = stages.values.first { $0.status == .running }
            fields["stage"] = (failed ?? running).map { .string($0.stage) } ?? .null
            fields["attempts"] = failed.map { .int($0.attempts) } ?? .null
            fields["stages"] = .array(inOrder(stages, order).map(stage))
        }
        return .object(fields)
    }

    /// A shared batch's item with the status its place in the queue gives it: the ledger holds a queued item as
    /// pending, or failed until a worker takes up a retried one, while it is `running` only under a live lease and
    /// `queued` otherwise. An item the queue does not hold (or a state folder's, `place` nil) keeps its own.
    static func placed(_ document: JSONValue, id: Int64, in place: (queued: Set<Int64>, running: Set<Int64>)?)
        -> JSONValue
    {
        guard let place, place.queued.contains(id), case .object(var fields) = document else { return document }
        fields["status"] = .string(place.running.contains(id) ? "running" : "queued")
        return .object(fields)
    }

    /// The checkpoints in the workflow's order: a stage's start time says when it ran, not where it stands (a stage
    /// reused from an earlier run, or one of two branches, starts before a stage declared ahead of it).
    static func inOrder(_ stages: [String: StageRecord], _ order: [String]) -> [StageRecord] {
        let position = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        return stages.values.sorted { first, second in
            switch (position[first.stage], position[second.stage]) {
            case (let a?, let b?): return a < b
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil):
                return (first.startedAt ?? .distantPast, first.stage) < (second.startedAt ?? .distantPast, second.stage)
            }
        }
    }

    /// One stage's checkpoint: status, attempts, times, outputs (masked) and error.
    static func stage(_ record: StageRecord) -> JSONValue {
        [
            "id": .string(record.stage), "uses": .string(record.uses), "status": .string(record.status.rawValue),
            "attempts": .int(record.attempts),
            "startedAt": record.startedAt.map { .string($0.formatted(.iso8601)) } ?? .null,
            "finishedAt": record.finishedAt.map { .string($0.formatted(.iso8601)) } ?? .null,
            "outputs": record.outputs.map { mask($0, name: nil) } ?? .null,
            "error": record.error.map { .string(mask(text: $0)) } ?? .null,
            "errorKind": record.errorKind.map { .string($0.rawValue) } ?? .null,
        ]
    }

    /// The http(s) URLs among an item's outputs (a Vimeo page, an uploaded object), masked as outputs are.
    static func links(_ stages: [String: StageRecord]) -> [JSONValue] {
        var found: [String] = []
        func collect(_ value: JSONValue) {
            switch value {
            case .string(let text) where text.hasPrefix("https://") || text.hasPrefix("http://"):
                found.append(mask(text: text))
            case .array(let values): values.forEach(collect)
            case .object(let members): members.keys.sorted().forEach { members[$0].map(collect) }
            default: break
            }
        }
        for id in stages.keys.sorted() { stages[id]?.outputs.map { collect(mask($0, name: nil)) } }
        var unique: [String] = []
        for link in found where !unique.contains(link) { unique.append(link) }
        return unique.map(JSONValue.string)
    }

    /// Words in an output's name that mark it as a secret.
    private static let secretWords = ["token", "secret", "password", "signature", "credential", "authorization", "key"]

    /// `value` with secret-named members replaced by `"••••"` and URLs stripped of their query.
    static func mask(_ value: JSONValue, name: String?) -> JSONValue {
        if let name {
            let lowered = name.lowercased()
            if secretWords.contains(where: { lowered.contains($0) }) { return .string("••••") }
        }
        switch value {
        case .string(let text): return .string(mask(text: text))
        case .array(let values): return .array(values.map { mask($0, name: name) })
        case .object(let members):
            return .object(Dictionary(uniqueKeysWithValues: members.map { ($0, mask($1, name: $0)) }))
        default: return value
        }
    }

    /// A text with the query of every URL in it removed (signatures and tokens travel there).
    static func mask(text: String) -> String {
        guard text.contains("://"), text.contains("?") else { return text }
        return text.split(separator: " ", omittingEmptySubsequences: false).map { word in
            guard word.contains("://"), let query = word.firstIndex(of: "?") else { return String(word) }
            return String(word[..<query]) + "?…"
        }.joined(separator: " ")
    }
}
