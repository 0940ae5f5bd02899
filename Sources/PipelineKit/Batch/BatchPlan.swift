import Foundation
public import StageKit

/// What a run will do with each file it found, decided from the ledger before any stage runs: `pipeline plan`
/// prints it, `pipeline run` carries it out.
public struct BatchPlan: Sendable {
    /// The files found, in order, each with what happens to it.
    public var items: [PlannedItem]
    /// Files the input selection left out, with the reason.
    public var passedOver: [PassedOver]
    /// Fingerprints and probes computed for this plan, for the ledger's cache: a run commits them in its first
    /// transaction (``StateStore/beginRun(_:caching:sightings:)``), a plan writes nothing.
    public var cacheEntries: [FingerprintCacheEntry]

    /// A file a stage of a runnable item writes at a relative path, as "stage ID (TYPE) writes PATH" (the first
    /// found by ``OutputClaimCheck``): taken from the working folder of the command that runs the stage, which
    /// `submit` cannot know for its workers, so it refuses the workflow.
    public var relativeDestination: String?

    /// The items a run takes up.
    public var runnable: [PlannedItem] {
        items.filter { if case .run = $0.action { true } else { false } }
    }

    /// How many of the items a run takes up the ledger has no item of.
    public var newItems: Int {
        // By index, reading the fields in place: a loop over the items would copy each one.
        items.indices.count { index in
            if case .run = items[index].action { items[index].known == nil } else { false }
        }
    }

    /// Done items found at another path than the ledger's (renamed, moved, or another spelling of the path),
    /// for ``StateStore/recordPaths(_:)``.
    public var sightings: [ItemSighting] {
        items.indices.compactMap { index in
            guard case .reuse(let ref, _) = items[index].action, let known = items[index].known else { return nil }
            let input = items[index].input
            guard known.input.path != input.path || known.input.relativePath != input.relativePath else { return nil }
            return ItemSighting(item: ref.item, input: input)
        }
    }
}

/// One file of a batch and what happens to it.
public struct PlannedItem: Sendable {
    /// What a run does with an item.
    public enum Action: Sendable, Hashable {
        /// Its stages run (those whose checkpoint is up to date are reused).
        case run(RunReason)
        /// It is done (this version of the item): nothing runs.
        case reuse(ItemVersion, reason: ReuseReason)
        /// It is left alone.
        case skip(reason: SkipReason)
    }

    /// Why an item's stages run.
    public enum RunReason: Sendable, Hashable, CustomStringConvertible {
        /// Content the ledger has not seen.
        case new
        /// The file at a known item's path has new content: a new version.
        case changed(version: Int)
        /// Not finished last time (failed, interrupted or still pending).
        case resume(ItemStatus)
        /// Done, but the workflow or the file's metadata changed since: its stages are checked one by one.
        case workflowChanged
        /// `--reprocess`: a new version, every stage runs.
        case reprocess(version: Int)

        /// Whether the run records a new version of the item.
        public var newVersion: Bool {
            switch self {
            case .changed, .reprocess: true
            case .new, .resume, .workflowChanged: false
            }
        }

        public var description: String {
            switch self {
            case .new: "new"
            case .changed(let version): "changed: version \(version)"
            case .resume(let status): "resume (\(status.rawValue) last time)"
            case .workflowChanged: "the workflow or its metadata changed since it was done"
            case .reprocess(let version): "--reprocess: version \(version)"
            }
        }
    }

    /// The file.
    public var input: InputItem
    /// Its content's fingerprint (nil when it could not be read).
    public var fingerprint: String?
    /// What happens to it.
    public var action: Action
    /// The ledger's item for this content or path, if any; nil also for an item done at the path it was
    /// done at (the ``Action/reuse(_:reason:)`` action has its version): a plan of a large unchanged folder
    /// holds no ledger item.
    public var known: LedgerItem? {
        get { knownItem?.item }
        set { knownItem = newValue.map(KnownItem.init) }
    }
    /// What the item is done with once it succeeds: the workflow's digest, with its metadata when it has any.
    public var digest: String
    /// FFmpeg's reason, for a file whose name says media that it cannot read (``DamagedInputPolicy/fail`` and
    /// ``DamagedInputPolicy/export``): a run admits the item and fails it with ``ErrorKind/damagedInput`` before
    /// any stage runs.
    public var damage: String?
    /// The files its stages write at paths the workflow chose, in normal form, as far as they are known before any
    /// stage runs (``OutputClaimCheck``): a run or a submission claims them as it admits the item.
    public var destinations: [String] = []
    /// Why it may not write one of them, when another item does (``OutputClaimCheck``): a run admits the item and
    /// fails it with ``ErrorKind/outputCollision`` before any stage runs; a submission records it failed.
    public var collision: OutputCollision?

    /// `known`, held by reference: most items have none, and a plan's array of items stays small.
    private var knownItem: KnownItem?

    /// Creates a planned item.
    public init(input: InputItem, fingerprint: String?, action: Action, known: LedgerItem? = nil, digest: String = "") {
        self.input = input
        self.fingerprint = fingerprint
        self.action = action
        self.digest = digest
        self.known = known
    }

    /// The ledger's number for the item, when the ledger knows it.
    public var itemID: Int64? {
        if case .reuse(let ref, _) = action { ref.item } else { known?.id }
    }

    /// What a run tells the ledger when it takes the item up; nil when its stages do not run.
    public var admission: ItemAdmission? {
        guard case .run(let reason) = action, let fingerprint else { return nil }
        return ItemAdmission(item: known?.id, newVersion: reason.newVersion, fingerprint: fingerprint, input: input)
    }
}

extension PlannedItem {
    /// Done at the path the ledger knows it by: decided as soon as the ledger's item is found (only such
    /// items are `reuse` before the whole batch is settled).
    var isDecided: Bool {
        if case .reuse = action { known == nil } else { false }
    }
}

/// A ledger item held by reference.
private final class KnownItem: Sendable {
    let item: LedgerItem

    init(_ item: LedgerItem) {
        self.item = item
    }
}

/// A file the input selection left out, and why.
public struct PassedOver: Sendable, Hashable {
    /// The file or folder.
    public var path: String
    /// Why: hidden, excluded by a pattern, not included by the patterns, not a regular file.
    public var reason: SkipReason
}
