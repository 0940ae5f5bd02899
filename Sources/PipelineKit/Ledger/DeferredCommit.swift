/// The ledger writes whose commit does not wait for a sync of its own: the one place that decides which, and why.
///
/// The rule: a checkpoint that comes before an outside effect is durable before that effect. An outside effect is
/// a stage's attempt (it may create or change something remote) or a notification sent. Only writes after which
/// no outside effect can happen before the next synced commit skip their sync:
///
/// - The ledger is in WAL mode with one writing connection, so commits reach the log in order, and one sync of the
///   log makes every commit before it durable too. A deferred commit is committed with `synchronous = NORMAL`
///   (atomic and consistent, the log synced before every checkpoint of it into the database file), not `OFF`.
/// - A crash of the process (`kill -9`) loses no commit, synced or not: it is in the kernel's cache. Only a power
///   cut can, and then it takes the deferred commits after the last synced one, never one before it.
/// - The runner syncs a deferred commit before a stage's attempt starts: it writes the attempt's start in a synced
///   commit then (``StateStore/holdsDeferredCommits``; otherwise the start waits for the stage's first checkpoint,
///   as it always did). A notifier records a notice in a synced commit before it sends it. Closing the ledger
///   checkpoints it, which syncs the log first; when another connection keeps the ledger open, or the close fails,
///   the close syncs the log itself (``SQLiteLedger/close()``).
///
/// Before the first frame of a run of one new file this takes the syncs of the ledger's tables, the run's start,
/// the item's admission and its output claims (four syncs, six with the log's header and folder) down to the log's
/// header and folder at the open and one sync when the stage starts; after the stage's success, the item's and the
/// run's ends add no sync of their own to the one of closing the ledger.
///
/// Each deferring call site passes its case, which names it here; how a write commits depends only on whether it
/// is deferred.
enum DeferredCommit: Sendable {
    /// Making the ledger's tables (a new ledger, or what an older one lacks). Nothing outside depends on them; a
    /// power cut before the next sync loses them and the next open makes them again.
    case schema
    /// A run's start (``StateStore/beginRun(_:caching:sightings:)``): a record for the run history, with the
    /// fingerprints planning cached. Lost, the history misses a run whose stages never started, and the next plan
    /// reads those files again.
    case runStart
    /// An item taken up (``StateStore/admit(_:workflow:)``). Its first stage's start is synced before the stage
    /// runs; lost before that, the next run takes the file up the same way (the ledger is keyed by its content).
    case admission
    /// The files an item claims (``StateStore/claimOutputs(_:for:workflow:)``): synced with the start of the stage
    /// that writes them, which is the first moment another process could see a file at those paths.
    case outputClaims
    /// An item's end (``StateStore/finish(_:result:digest:)``), after its stages' synced checkpoints. Lost, the next
    /// run finds every stage of the item succeeded and records the end without running one (a `pipeline watch` that
    /// then waits for files holds it until its next synced commit).
    case itemEnd
    /// A run's end with its totals (``StateStore/finishRun(_:summary:)``); closing the ledger syncs it (the log, when
    /// it cannot checkpoint it). Lost, the run history shows the run interrupted.
    case runEnd
}
