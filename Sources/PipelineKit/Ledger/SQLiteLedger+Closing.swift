import Foundation
import GRDB

extension SQLiteLedger {
    /// Closes the database and leaves nothing it committed unsynced. When this connection is the last one, closing
    /// folds the write-ahead log into the database file (syncing both) and removes the log, so the state folder is
    /// one file again. When another connection keeps the database open (a `pipeline status`, a server's reader),
    /// or the close fails, the log stays: then, if a ``DeferredCommit`` is not synced yet, the log is synced here,
    /// which syncs every commit in it. Later calls fail.
    public func close() throws(StateError) {
        var failure: StateError?
        do {
            try pool.close()
        } catch {
            failure = Self.stateError(error, file: file, doing: "close")
        }
        do {
            if commits.holdsDeferred { try syncLeftLog() }
        } catch {
            failure = failure ?? error
        }
        if let failure { throw failure }
    }

    /// Syncs the write-ahead log if closing left it; none left means the close's checkpoint synced it first.
    private func syncLeftLog() throws(StateError) {
        let log = URL(fileURLWithPath: file.path + "-wal")
        if FileManager.default.fileExists(atPath: log.path) {
            do {
                let handle = try FileHandle(forReadingFrom: log)
                defer { try? handle.close() }
                try handle.synchronize()
            } catch {
                throw StateError(
                    code: .io, message: "cannot sync the ledger's log \(log.path): \(error.localizedDescription)",
                    path: log.path)
            }
        }
        commits.noteSynced()
    }
}
