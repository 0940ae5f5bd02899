public import Foundation
public import StageKit

/// Where a run's state lives: the ledger of items, their versions and their stage checkpoints.
///
/// ``SQLiteLedger`` keeps it in one SQLite file per state folder; a shared batch's store keeps it in PostgreSQL,
/// under the same rules (``LedgerRules``). Every method that writes returns only once
/// the change is durable, so a checkpoint is on disk before the next side effect; a store may leave the writes that
/// ``DeferredCommit`` names to be synced by its next synced commit, and says so in ``holdsDeferredCommits``. No
/// secret ever reaches a store: the runner redacts values before it hands them over.
public protocol StateStore: Sendable {
    /// Where the store is, for messages (a file path or a database address).
    var location: String { get }

    /// Whether a change the store committed is not durable yet (a deferred commit): the runner then has a stage's
    /// start written, and synced, before the stage runs.
    var holdsDeferredCommits: Bool { get }

    /// Every item of a workflow as the ledger knows it (for status, cancel and forget).
    func snapshot(workflow: String) async throws(StateError) -> LedgerSnapshot

    /// A workflow's items last seen at a path from `first` through `last`, in the byte order of their UTF-8
    /// (what a plan looks up for a chunk of files sorted by path: one range read, not one lookup per file).
    func items(workflow: String, pathsFrom first: String, through last: String) async throws(StateError)
        -> [LedgerItem]
    /// A workflow's items whose current content has one of `fingerprints`.
    func items(workflow: String, fingerprints: [String]) async throws(StateError) -> [LedgerItem]

    /// The fingerprint cache's entries for paths from `first` through `last` (byte order of their UTF-8), by path.
    func cachedFingerprints(pathsFrom first: String, through last: String) async throws(StateError)
        -> [String: FingerprintCacheEntry]
    /// Remembers fingerprints of files so an unchanged file is not read again.
    func cacheFingerprints(_ entries: [FingerprintCacheEntry]) async throws(StateError)

    /// Records the start of a run of a workflow (and what the workflow looks like), with what planning it
    /// learned: fingerprints to cache (``cacheFingerprints(_:)``) and where known items are now
    /// (``recordPaths(_:)``). Returns the run's number.
    func beginRun(_ run: RunRecord, caching entries: [FingerprintCacheEntry], sightings: [ItemSighting])
        async throws(StateError) -> Int64
    /// Records the end of a run with its totals.
    func finishRun(_ run: Int64, summary: RunSummary) async throws(StateError)

    /// Records that a run takes up an item (a new one, a new version of a known one, or a known one to
    /// resume), and returns its identity with its checkpoints.
    func admit(_ admission: ItemAdmission, workflow: String) async throws(StateError) -> AdmittedItem
    /// Records where finished items are now (renamed, moved or given by another spelling of the path).
    func recordPaths(_ sightings: [ItemSighting]) async throws(StateError)
    /// Writes one stage's checkpoint.
    func save(_ record: StageRecord, for item: ItemVersion) async throws(StateError)
    /// Removes stage checkpoints (the stages after one that runs again).
    func removeStages(_ stages: [String], for item: ItemVersion) async throws(StateError)
    /// Records how a run ended for an item: its status, and for a success the workflow digest it is done with.
    func finish(_ item: ItemVersion, result: ItemResult, digest: String?) async throws(StateError)
    /// Sets the status of items (`pipeline cancel`); a cancelled item's cancel request is answered.
    func setStatus(_ status: ItemStatus, of items: [Int64]) async throws(StateError)
    /// Asks the process that holds the store to cancel items (`pipeline cancel` while a run goes on).
    func requestCancel(of items: [Int64]) async throws(StateError)
    /// Drops cancel requests without cancelling (the undo failed; the item keeps its status).
    func answerCancelRequests(for items: [Int64]) async throws(StateError)
    /// The items of a workflow whose cancel was asked for and not yet done.
    func cancelRequests(workflow: String) async throws(StateError) -> Set<Int64>

    /// The checkpoints of the current version of a workflow's items (all of them when `items` is nil), by
    /// item number.
    func checkpoints(workflow: String, items: Set<Int64>?) async throws(StateError) -> [Int64: [String: StageRecord]]
    /// The succeeded outputs of the previous version of a workflow's items (all of them when `items` is nil),
    /// by item number and stage id (`${previous.*}`).
    func previousOutputs(workflow: String, items: Set<Int64>?) async throws(StateError)
        -> [Int64: [String: JSONValue]]
    /// Forgets items entirely: the next run treats their files as new.
    func forget(items: [Int64]) async throws(StateError)
    /// Forgets every item of a workflow (`--fresh`); returns their numbers (whose scratch folders go too).
    @discardableResult func forget(workflow: String) async throws(StateError) -> [Int64]
    /// The workflows the store has runs of.
    func workflows() async throws(StateError) -> [RunRecord]

    /// The items, of any workflow, that claim the files at these paths (normal forms, ``OutputPath``), by path.
    func outputClaims(paths: [String]) async throws(StateError) -> [String: OutputClaim]
    /// Claims the files at these paths (normal forms) for a version of an item, all or none: when another item (of
    /// any workflow) claims one of them, nothing is claimed and its claim is returned. The item's own claims move to
    /// this version; forgetting the item releases them.
    func claimOutputs(_ paths: [String], for item: ItemVersion, workflow: String) async throws(StateError)
        -> OutputClaim?
}

extension StateStore {
    /// By default a store may hold one, so the runner syncs a stage's start before the stage runs: a store that wraps
    /// another passes its answer on, and only a store that syncs every commit (PostgreSQL's) says `false`.
    public var holdsDeferredCommits: Bool { true }
}

/// An item and one version of its content.
public struct ItemVersion: Sendable, Hashable, Codable {
    /// The item's number in the ledger.
    public var item: Int64
    /// The version of its content: 1, then one more each time the file at its path changes.
    public var version: Int

    /// Creates a reference.
    public init(item: Int64, version: Int) {
        self.item = item
        self.version = version
    }
}

/// Where an item is.
public enum ItemStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Admitted by a run, not finished.
    case pending
    /// Every stage succeeded or was skipped by its `if`.
    case succeeded
    /// A stage failed; the next run tries again.
    case failed
    /// A signal stopped it; the next run resumes it.
    case interrupted
    /// `pipeline cancel` undid it; later runs leave it alone until `--reprocess`.
    case cancelled
}

/// One item of a workflow as the ledger knows it (its current version).
public struct LedgerItem: Sendable, Hashable {
    /// Its number.
    public var id: Int64
    /// Its current version.
    public var version: Int
    /// The fingerprint of the current version's content.
    public var fingerprint: String
    /// The input as it was last seen.
    public var input: InputItem
    /// Where it is.
    public var status: ItemStatus
    /// The workflow digest it last succeeded with (``WorkflowDigest``): while it is the same, nothing runs.
    public var digest: String?
    /// The last error, when it failed.
    public var error: FailureReport?
    /// When it last changed.
    public var updatedAt: Date

    /// Creates an item.
    public init(
        id: Int64, version: Int, fingerprint: String, input: InputItem, status: ItemStatus, digest: String?,
        error: FailureReport?, updatedAt: Date
    ) {
        self.id = id
        self.version = version
        self.fingerprint = fingerprint
        self.input = input
        self.status = status
        self.digest = digest
        self.error = error
        self.updatedAt = updatedAt
    }

    /// This item's current version.
    public var current: ItemVersion { ItemVersion(item: id, version: version) }
}

/// The items of one workflow, for `pipeline status`, `cancel` and `forget` (a plan reads the ledger a chunk at
/// a time instead).
public struct LedgerSnapshot: Sendable {
    /// Every item.
    public var items: [LedgerItem]

    /// A snapshot of `items`.
    public init(items: [LedgerItem]) {
        self.items = items
    }
}

/// What a run tells the ledger about an item it takes up.
public struct ItemAdmission: Sendable, Hashable {
    /// The known item, or nil for a new one.
    public var item: Int64?
    /// Whether its content changed: a new version is recorded.
    public var newVersion: Bool
    /// The content's fingerprint.
    public var fingerprint: String
    /// The input as found now.
    public var input: InputItem

    /// Creates an admission.
    public init(item: Int64?, newVersion: Bool, fingerprint: String, input: InputItem) {
        self.item = item
        self.newVersion = newVersion
        self.fingerprint = fingerprint
        self.input = input
    }
}

/// A finished item seen at a path: the path becomes its current one and joins the paths it was seen at.
public struct ItemSighting: Sendable, Hashable {
    /// The item.
    public var item: Int64
    /// The input where it was found.
    public var input: InputItem

    /// Creates a sighting.
    public init(item: Int64, input: InputItem) {
        self.item = item
        self.input = input
    }
}

/// An item taken up by a run, with the checkpoints of its current version and the outputs of its previous one.
public struct AdmittedItem: Sendable {
    /// The item and the version being processed.
    public var ref: ItemVersion
    /// The current version's checkpoints by stage id.
    public var stages: [String: StageRecord]
    /// The succeeded outputs of the previous version by stage id (`${previous.*}`), empty for version 1.
    public var previousOutputs: [String: JSONValue]

    /// Creates an admitted item.
    public init(ref: ItemVersion, stages: [String: StageRecord], previousOutputs: [String: JSONValue]) {
        self.ref = ref
        self.stages = stages
        self.previousOutputs = previousOutputs
    }
}

/// How one item ended in one run: what reports and `pipeline status` read.
public struct ItemResult: Sendable, Hashable, Codable {
    /// The item and version, nil for a file the run left alone before admitting it (filtered, over a limit).
    public var ref: ItemVersion?
    /// The content's fingerprint, when known.
    public var fingerprint: String?
    /// The file.
    public var path: String
    /// What happened to it.
    public var outcome: ItemOutcome
    /// Why it was reused or skipped, or how it failed.
    public var reason: String?
    /// The error kind of a failure.
    public var errorKind: ErrorKind?
    /// Stages run and reused.
    public var stagesRun: Int
    /// Stages whose checkpoint was reused.
    public var stagesReused: Int
    /// Wall time spent on it in seconds.
    public var seconds: Double
    /// Its size in bytes.
    public var bytes: Int64

    /// Creates a result.
    public init(
        ref: ItemVersion?, fingerprint: String?, path: String, outcome: ItemOutcome, reason: String? = nil,
        errorKind: ErrorKind? = nil, stagesRun: Int = 0, stagesReused: Int = 0, seconds: Double = 0, bytes: Int64 = 0
    ) {
        self.ref = ref
        self.fingerprint = fingerprint
        self.path = path
        self.outcome = outcome
        self.reason = reason
        self.errorKind = errorKind
        self.stagesRun = stagesRun
        self.stagesReused = stagesReused
        self.seconds = seconds
        self.bytes = bytes
    }
}

/// What a run did with an item.
public enum ItemOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    /// Its stages ran (some may have been reused) and all succeeded.
    case done
    /// It was already done: nothing ran.
    case reused
    /// It was left alone, with a reason (filtered, a limit, a duplicate, cancelled).
    case skipped
    /// A stage failed.
    case failed
    /// A signal stopped it.
    case interrupted
}
