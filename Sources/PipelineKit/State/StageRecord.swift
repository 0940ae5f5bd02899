public import Foundation
public import StageKit

/// The checkpoint of one stage for one version of an item.
public struct StageRecord: Codable, Sendable, Hashable {
    /// Where a stage is.
    public enum Status: String, Codable, Sendable {
        /// Started and not finished: it was running when the process stopped, or is running now.
        case running
        /// Finished; its outputs are final.
        case succeeded
        /// Gave up after its attempts; the next run tries again.
        case failed
        /// Its `if` condition was false, or a stage it waits for failed (``StageRecord/reason`` says which).
        case skipped
        /// Stopped by a signal; the next run resumes it.
        case interrupted
    }

    /// The stage id.
    public var stage: String
    /// The stage type.
    public var uses: String
    /// Where it is.
    public var status: Status
    /// Attempts made, over all runs.
    public var attempts: Int
    /// SHA-256 of the resolved options (secrets as their expressions): a change reruns the stage.
    public var optionsHash: String
    /// The resolved options with secrets as their expressions, to tell which option changed.
    public var options: JSONValue?
    /// The outputs, once it succeeded.
    public var outputs: JSONValue?
    /// The stage's own resume data (an upload URL and offset, finished parts).
    public var resume: JSONValue?
    /// Keys generated before remote side effects, reused by every retry and resume.
    public var intents: [String: String]
    /// The last error, for `pipeline status`.
    public var error: String?
    /// The kind of the last error (`"network"`, `"quota-exceeded"`), for machines.
    public var errorKind: ErrorKind?
    /// When the current or last attempt started.
    public var startedAt: Date?
    /// When it finished.
    public var finishedAt: Date?
    /// How long its last attempt took, to the millisecond (the dates above are stored to the second); nil in
    /// checkpoints from before it was kept, and for a stage that never ran (skipped).
    public var seconds: Double?
    /// The files among its outputs, by path, with their content fingerprints (``OutputFiles``): its checkpoint
    /// stands only while they are there unchanged, so a worker on another machine re-creates what it cannot see.
    public var files: [String: String]?
    /// Why it was skipped: its `if` was false (`if ${…} is false`), or a stage it waits for failed
    /// (``SkipReason/waitsFor(failed:)``).
    public var reason: String?
    /// The last lines the stage logged during its last attempt, when that attempt succeeded and logged any (an
    /// `exec` program's stderr, FFmpeg's complaints), each as `level: text` and bounded as an attempt's are
    /// (``StageAttempt/log``): a success is not recorded as an attempt, so its checkpoint keeps them.
    public var log: [String]?

    /// Creates a record.
    public init(stage: String, uses: String, status: Status, optionsHash: String) {
        self.stage = stage
        self.uses = uses
        self.status = status
        self.attempts = 0
        self.optionsHash = optionsHash
        self.intents = [:]
    }
}

extension StageRecord {
    /// Ends the current attempt now, after `seconds`, kept to the millisecond.
    package mutating func finish(after seconds: Double) {
        finishedAt = Date()
        self.seconds = (seconds * 1000).rounded() / 1000
    }

    /// The record as a ledger stores it: JSON with sorted keys and ISO 8601 dates.
    package func encoded() throws(StateError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        } catch {
            throw StateError(
                code: .io, message: "cannot encode the checkpoint of stage \(stage): \(error)", path: "")
        }
    }

    /// A record as a ledger stored it.
    package init(decoding text: String) throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        self = try decoder.decode(StageRecord.self, from: Data(text.utf8))
    }
}

/// What a run of a workflow looks like, for `pipeline status`.
public struct RunRecord: Codable, Sendable, Hashable {
    /// The workflow's name.
    public var workflow: String
    /// The workflow file's path when it last ran.
    public var file: String
    /// The stage ids in order.
    public var stages: [String]
    /// How many files the run takes up that the ledger has no item of yet (nil when not known): until it admits
    /// them they are nowhere in the ledger, and a dashboard counts them as queued from the run's first second.
    public var newItems: Int?

    /// Creates a run record.
    public init(workflow: String, file: String, stages: [String], newItems: Int? = nil) {
        self.workflow = workflow
        self.file = file
        self.stages = stages
        self.newItems = newItems
    }
}

extension StageRecord {
    /// The record as a store may keep it: secrets in outputs, resume data and errors replaced by their
    /// expressions, and presigned URLs' signatures masked in errors (outputs keep them: a later run reads them).
    func redacted(by redactor: SecretRedactor) -> StageRecord {
        var stored = self
        stored.outputs = outputs.map(redactor.redact)
        stored.resume = resume.map(redactor.redact)
        stored.error = error.map(redactor.shown)
        return stored
    }

    /// The reason a stage skipped by its `if` records (for `status` and `--report`).
    static func conditionSkip(_ condition: String) -> String { "if \(condition) is false" }

    /// Whether this checkpoint is a skip by the stage's `if`, whatever its condition said then (a checkpoint from
    /// before skips kept their condition has no reason): the stages that wait for it stand, since they saw null
    /// from it either way. Editing a condition that is still false must not upload anything again.
    var isConditionSkip: Bool {
        status == .skipped && (reason.map { $0.hasPrefix("if ") && $0.hasSuffix(" is false") } ?? true)
    }

    /// Records a failure of the current attempt.
    mutating func record(_ failure: FailureReport) {
        error = failure.message
        errorKind = failure.kind
    }
}
