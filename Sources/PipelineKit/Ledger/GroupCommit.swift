import GRDB
import NIOConcurrencyHelpers

/// Writes waiting for a transaction of the ledger: one transaction commits every write queued while the
/// previous one was under way.
final class GroupCommit: Sendable {
    /// One write: `apply` runs inside the transaction (and says whether it succeeded), `complete` after its commit
    /// (with the commit's error). A write that is `deferred` (``DeferredCommit``) does not need its commit synced.
    struct Write: Sendable {
        var apply: @Sendable (Database) -> Bool
        var complete: @Sendable ((any Error)?) -> Void
        var deferred: DeferredCommit?
    }

    private struct Queue {
        var writes: [Write] = []
        var draining = false
        /// Whether a committed change has not been synced yet.
        var holdsDeferred = false
    }

    private let queue = NIOLockedValueBox(Queue())

    /// Whether a committed change has not been synced yet: the next synced commit syncs it.
    var holdsDeferred: Bool { queue.withLockedValue { $0.holdsDeferred } }

    /// Notes a commit made outside the queue without a sync (`write` names which: the ledger's tables at open). It
    /// may have changed nothing (an existing ledger's tables); holding it errs on the safe side, one sync more.
    func noteDeferred(_ write: DeferredCommit) {
        queue.withLockedValue { $0.holdsDeferred = true }
    }

    /// Notes that every commit was synced outside the queue (the log synced at close).
    func noteSynced() {
        queue.withLockedValue { $0.holdsDeferred = false }
    }

    /// Queues a write; starts a transaction on the writer unless one is under way (it takes this write next).
    func submit(_ write: Write, to writer: any DatabaseWriter) {
        let start = queue.withLockedValue { queue -> Bool in
            queue.writes.append(write)
            guard !queue.draining else { return false }
            queue.draining = true
            return true
        }
        guard start else { return }
        writer.asyncWriteWithoutTransaction { db in
            while true {
                let batch = self.queue.withLockedValue { queue -> [Write] in
                    let batch = queue.writes
                    queue.writes = []
                    if batch.isEmpty { queue.draining = false }
                    return batch
                }
                guard !batch.isEmpty else { return }
                let synced = batch.contains { $0.deferred == nil }
                do {
                    try self.commit(batch, synced: synced, in: db)
                    for write in batch { write.complete(nil) }
                } catch {
                    for write in batch { write.complete(error) }
                }
            }
        }
    }

    /// Commits one transaction of `batch`; unless it is `synced`, without waiting for the log's sync. Notes whether
    /// a change is left unsynced: a deferred commit that changed rows leaves one; a synced one that changed rows, with
    /// every write applied, leaves none (it wrote to the log, and syncing it synced what came before). A transaction
    /// that changes no row writes nothing and syncs nothing, and one with a failed write may have changed rows only
    /// to roll them back: those leave it as it was. A synced commit sets `FULL` itself rather than trust that the last
    /// deferred one put it back.
    private func commit(_ batch: [Write], synced: Bool, in db: Database) throws {
        let changesBefore = db.totalChangesCount
        // The pragma takes effect when its statement is prepared, not when it runs: it must stay an uncached
        // `execute(sql:)` (a cached statement would leave the connection at the level it was prepared with).
        try db.execute(sql: synced ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        defer { if !synced { try? db.execute(sql: "PRAGMA synchronous = FULL") } }
        var applied = true
        try db.inTransaction {
            for write in batch { applied = write.apply(db) && applied }
            return .commit
        }
        guard db.totalChangesCount != changesBefore else { return }
        if !synced {
            queue.withLockedValue { $0.holdsDeferred = true }
        } else if applied {
            queue.withLockedValue { $0.holdsDeferred = false }
        }
    }
}
