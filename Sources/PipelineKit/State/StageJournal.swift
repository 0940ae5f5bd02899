import Foundation
import StageKit

/// Writes one stage's checkpoint as the stage works: each change is durable before `update` returns.
///
/// Changes apply to the in-memory record at once and in order; writes happen one at a time, off the
/// cooperative pool (the ``StateStore`` syncs on its own threads), and a write that is
/// under way when further changes arrive is followed by one write of the newest record, which makes
/// every waiting change durable together. No thread waits on a lock while a file is synced: waiting
/// writers are suspended tasks.
actor StageJournal: StageCheckpointing {
    private(set) var current: StageRecord
    private let store: any StateStore
    private let item: ItemVersion
    private let redactor: SecretRedactor
    /// Counts changes; `durable` is the newest one on disk.
    private var version = 0
    private var durable = 0
    private var write: Task<Int, any Error>?

    init(record: StageRecord, store: any StateStore, item: ItemVersion, redactor: SecretRedactor) {
        self.current = record
        self.store = store
        self.item = item
        self.redactor = redactor
    }

    /// Applies `change` and returns once it is on disk.
    func update(_ change: (inout StageRecord) -> Void) async throws(StateError) {
        change(&current)
        version += 1
        let needed = version
        do {
            while durable < needed {
                if let pending = write {
                    durable = max(durable, try await pending.value)
                    // Its starter may not have run yet to clear it; a finished write is never awaited again (its
                    // value comes back at once, and waiting on it in this loop would spin without yielding).
                    if write == pending { write = nil }
                    continue
                }
                let (snapshot, snapshotVersion) = (current.redacted(by: redactor), version)
                let (store, item) = (self.store, self.item)
                let started = Task<Int, any Error> {
                    try await store.save(snapshot, for: item)
                    return snapshotVersion
                }
                write = started
                defer { if write == started { write = nil } }
                durable = max(durable, try await started.value)
            }
        } catch let error as StateError {
            throw error
        } catch {
            throw StateError(
                code: .io, message: "cannot save the checkpoint of stage \(current.stage): \(error)",
                path: store.location)
        }
    }

    /// Applies `change` now; it becomes durable with the next ``update(_:)`` (the stage's first checkpoint or
    /// its end). For bookkeeping that no side effect depends on, such as an attempt starting: a transition then
    /// costs one synced commit, not two.
    func note(_ change: (inout StageRecord) -> Void) {
        change(&current)
        version += 1
    }

    func saveCheckpoint(_ value: JSONValue) async throws {
        try await update { $0.resume = value }
    }

    func idempotencyKey(_ name: String) async throws -> String {
        if let key = current.intents[name] { return key }
        let key = UUID().uuidString.lowercased()
        try await update { record in
            if record.intents[name] == nil { record.intents[name] = key }
        }
        return current.intents[name] ?? key
    }
}
