public import Foundation
public import StageKit

/// An item's history as a ledger keeps it: its versions, the checkpoints of the versions it still holds, and the
/// stage attempts that did not simply succeed (``StageAttempt``).
///
/// A stage's success costs nothing here, warnings or not: its start, end and duration are in its checkpoint, and
/// the item's versions say when each was found. Only an attempt that failed or was interrupted is written, and an item keeps the last ``StageAttempt/keptPerItem`` of them, so a stage that fails
/// in a loop cannot grow the ledger without bound.
public protocol AttemptHistory: Sendable {
    /// Records an attempt of a stage of `item`, dropping the item's oldest beyond ``StageAttempt/keptPerItem``.
    /// A shared batch's store records the worker that holds the item's lease as the one that ran it.
    func recordAttempt(_ attempt: StageAttempt, of item: Int64) async throws(StateError)
    /// The history of `item`, or nil when the ledger has no such item. A ledger made before attempts were kept
    /// has none (and is not changed by reading it).
    func history(of item: Int64) async throws(StateError) -> ItemHistory?
}

/// One attempt of a stage that did not simply succeed: when it ran, how it ended, its error, and the end of what
/// the stage logged meanwhile.
public struct StageAttempt: Sendable, Hashable, Codable {
    /// How an attempt ended.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// It failed (the stage was tried again, or gave up; the next attempt's row, or its checkpoint, says which).
        case failed
        /// A signal or a cancel stopped it.
        case interrupted
    }

    /// How many attempts an item keeps.
    public static let keptPerItem = 20
    /// The bytes of an error kept (its end, where a command's last words are): with the log's
    /// ``AttemptLog/byteLimit``, an item's attempts take at most about `keptPerItem` × 12 KiB.
    public static let errorLimit = 4 * 1024

    /// The version of the item's content the attempt worked on.
    public var version: Int
    /// The stage id.
    public var stage: String
    /// The attempt's number: the checkpoint's count when it started, which goes on over runs while the stage is
    /// unfinished with the same options and starts again at 1 when they change or after a success (with
    /// ``startedAt``, it names the attempt).
    public var attempt: Int
    /// When it started.
    public var startedAt: Date
    /// When it ended.
    public var finishedAt: Date
    /// How long it took, to the millisecond (the dates are stored to the second).
    public var seconds: Double
    /// How it ended.
    public var outcome: Outcome
    /// The kind of its error.
    public var errorKind: ErrorKind?
    /// Its error (secrets redacted), its last ``errorLimit`` bytes.
    public var error: String?
    /// The worker that ran it, in a shared batch (filled in by the store).
    public var worker: String?
    /// The last lines the stage logged during the attempt, each as `level: text` (``AttemptLog``).
    public var log: [String]

    /// An attempt.
    public init(
        version: Int, stage: String, attempt: Int, startedAt: Date, finishedAt: Date, seconds: Double,
        outcome: Outcome, error: FailureReport? = nil, worker: String? = nil, log: [String] = []
    ) {
        self.version = version
        self.stage = stage
        self.attempt = attempt
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.seconds = (seconds * 1000).rounded() / 1000
        self.outcome = outcome
        self.errorKind = error?.kind
        self.error = error.map { AttemptLog.ending(of: $0.message, bytes: Self.errorLimit) }
        self.worker = worker
        self.log = log
    }
}

/// An item's versions, checkpoints and recorded attempts, oldest first.
public struct ItemHistory: Sendable, Hashable {
    /// One version of the item's content.
    public struct Version: Sendable, Hashable {
        /// Its number.
        public var version: Int
        /// Where the file was when this version was found.
        public var path: String
        /// When it was found.
        public var createdAt: Date

        /// A version.
        public init(version: Int, path: String, createdAt: Date) {
            self.version = version
            self.path = path
            self.createdAt = createdAt
        }
    }

    /// Every version, oldest first.
    public var versions: [Version]
    /// The checkpoints of the versions the ledger still holds (the current and the previous one), by version.
    public var checkpoints: [Int: [StageRecord]]
    /// The attempts recorded, oldest first.
    public var attempts: [StageAttempt]

    /// A history.
    public init(versions: [Version], checkpoints: [Int: [StageRecord]], attempts: [StageAttempt]) {
        self.versions = versions
        self.checkpoints = checkpoints
        self.attempts = attempts
    }
}

extension StageAttempt {
    /// The attempt as a ledger stores it: JSON with sorted keys and ISO 8601 dates (the worker is a column of its own).
    package func encoded() throws(StateError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var stored = self
        stored.worker = nil
        do {
            return String(decoding: try encoder.encode(stored), as: UTF8.self)
        } catch {
            throw StateError(code: .io, message: "cannot encode an attempt of stage \(stage): \(error)", path: "")
        }
    }

    /// An attempt as a ledger stored it, run by `worker`; nil for a record this pipeline cannot read (one a newer
    /// pipeline wrote, with an outcome it does not know), which a history leaves out rather than failing.
    package init?(decoding text: String, worker: String?) {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let stored = try? decoder.decode(StageAttempt.self, from: Data(text.utf8)) else { return nil }
        self = stored
        self.worker = worker
    }
}
