import GRDB
import NIOConcurrencyHelpers

/// Writes waiting for a transaction of the ledger: one transaction commits every write queued while the
/// previous one was under way.
final class GroupCommit: Sendable {
    /// One write: `apply` runs inside the transaction, `complete` after its commit (with the commit's error).
    struct Write: Sendable {
        var apply: @Sendable (Database) -> Void
        var complete: @Sendable ((any Error)?) -> Void
    }

    private struct Queue {
        var writes: [Write] = []
        var draining = false
    }

    private let queue = NIOLockedValueBox(Queue())

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
                do {
                    try db.inTransaction {
                        for write in batch { write.apply(db) }
                        return .commit
                    }
                    for write in batch { write.complete(nil) }
                } catch {
                    for write in batch { write.complete(error) }
                }
            }
        }
    }
}
