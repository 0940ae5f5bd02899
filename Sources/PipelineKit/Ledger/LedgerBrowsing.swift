public import Foundation

/// Reads of a ledger for a dashboard that watches it while runs and workers write to it: counts and pages of
/// items, never the whole ledger, so that a page of a 100,000-item ledger is answered in milliseconds.
///
/// Both stores implement it (``SQLiteLedger`` and the shared batch's PostgreSQL store) with the same meaning;
/// what `pipeline status` prints comes from ``StateStore`` and the batch queue, and these reads count the same rows.
public protocol LedgerBrowsing: StateStore {
    /// How many items each workflow has in each status and their bytes, by workflow name.
    func statusCounts() async throws(StateError) -> [String: [ItemStatus: ItemTally]]
    /// A page of the items `query` asks for, in its order, and how many match it: filtered, ordered and counted
    /// by the database through its indexes, never by reading every item.
    func items(matching query: ItemQuery) async throws(StateError) -> ItemList
    /// The error kinds the ledger's failed items have, sorted (a list's filter offers them).
    func errorKinds() async throws(StateError) -> [String]
    /// One item with the name of its workflow, or nil when the ledger has no such item.
    func item(_ id: Int64) async throws(StateError) -> (workflow: String, item: LedgerItem)?
    /// How many of a workflow's items were last finished (done) in each minute of the `minutes` up to the last
    /// one done, from the oldest minute (an index range, however many items the ledger has).
    func doneByMinute(workflow: String, minutes: Int) async throws(StateError) -> [(minute: Date, done: Int)]
    /// The totals of the last run of each workflow that finished, by workflow name.
    func lastRunSummaries() async throws(StateError) -> [String: RunTotals]
    /// What the last run of each workflow planned, while it has not finished, by workflow name.
    func runsUnderWay() async throws(StateError) -> [String: RunUnderWay]
    /// A page of the past runs (a shared batch: submissions), newest first, with how many there are in all.
    func pastRuns(limit: Int, offset: Int) async throws(StateError) -> RunPage
}

extension LedgerBrowsing {
    /// No run under way is known: a shared batch counts what it will process in its queue.
    public func runsUnderWay() async throws(StateError) -> [String: RunUnderWay] { [:] }
}

/// A run that has started and not finished, as planned: a dashboard counts the files it has not taken up yet.
public struct RunUnderWay: Sendable, Hashable {
    /// How many files it takes up that the ledger had no item of when it started.
    public var newItems: Int
    /// How many items the workflow had when it started.
    public var itemsBefore: Int

    /// A run under way.
    public init(newItems: Int, itemsBefore: Int) {
        self.newItems = newItems
        self.itemsBefore = itemsBefore
    }

    /// The files it has not taken up yet, given how many items the workflow has now: each file it takes up that
    /// the ledger did not know adds one item.
    public func queued(itemsNow: Int) -> Int { max(0, newItems - max(0, itemsNow - itemsBefore)) }
}

/// How many items are in a status, and their size.
public struct ItemTally: Sendable, Hashable {
    /// Items.
    public var count: Int
    /// The sum of their sizes in bytes.
    public var bytes: Int64

    /// A tally.
    public init(count: Int, bytes: Int64) {
        self.count = count
        self.bytes = bytes
    }
}

/// The totals a finished run recorded in the ledger, as a dashboard shows them.
public struct RunTotals: Sendable, Hashable {
    /// When the run started.
    public var startedAt: Date
    /// When it finished.
    public var finishedAt: Date
    /// Files left alone with a reason (filtered, over a limit, duplicates).
    public var skipped: Int
    /// Bytes of the items it processed.
    public var bytes: Int64

    /// Totals of a run.
    public init(startedAt: Date, finishedAt: Date, skipped: Int, bytes: Int64) {
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.skipped = skipped
        self.bytes = bytes
    }
}

/// The notifications a ledger has sent, so that an event is announced once, however often runs repeat it.
public protocol NotificationLog: Sendable {
    /// Records that the notification with `key` is being sent; false when it already was (by this process, an
    /// earlier run, or another worker), and then it must not be sent again. It must stay a synced write, never a
    /// ``DeferredCommit``: a notifier sends only after this returns, so its commit syncs every one before it.
    func claimNotification(_ key: String) async throws(StateError) -> Bool
}

extension ItemStatus {
    /// The status's name in the status API, the dashboard and notifications (`done`, `running`, …): an item the
    /// ledger holds as `pending` is admitted and not finished, so running; `succeeded` is done.
    public var reportedName: String {
        switch self {
        case .pending: "running"
        case .succeeded: "done"
        case .failed: "failed"
        case .interrupted: "interrupted"
        case .cancelled: "cancelled"
        }
    }
}
