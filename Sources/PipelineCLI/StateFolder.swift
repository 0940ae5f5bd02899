import ArgumentParser
import Foundation
import PipelineKit

import struct StageKit.InputItem

/// A command's state folder: its lock (for commands that write) and its ledger. Problems end the command with
/// exit code 1.
struct StateFolder {
    /// The folder.
    let folder: URL
    /// The ledger.
    let ledger: SQLiteLedger
    /// Held while the command writes.
    private let lock: StateLock?
    /// Whether the ledger was made new by this command (none was there, or `--fresh` moved a damaged one aside):
    /// it numbers items from 1 again, so no scratch folder left in the folder belongs to one of its items.
    var isNewLedger = false

    /// Where stages get scratch folders.
    var scratchRoot: URL { folder.appendingPathComponent("scratch") }

    /// Opens the folder for a command that writes: takes the lock, refuses the layout of earlier versions
    /// (unless `fresh`, which removes it), and with `fresh` moves a damaged ledger aside. A `pipeline watch`
    /// says so in the lock file with the name of the workflow it is `watching`: it runs that workflow's retried items
    /// at once (``holder(_:)``).
    static func openForWriting(_ path: String, fresh: Bool, watching: String? = nil) throws(CommandFailure)
        -> StateFolder
    {
        let folder = URL(fileURLWithPath: path).standardizedFileURL
        // `pipeline cancel` and a dashboard's retry signal the holder with SIGUSR1; a holder that does not listen
        // must not die of it.
        signal(SIGUSR1, SIG_IGN)
        do {
            let lock = try StateLock(folder: folder, command: watching.map { watchCommand + $0 })
            try SQLiteLedger.checkLayout(of: folder, fresh: fresh)
            let existed = SQLiteLedger.exists(in: folder)
            do {
                return StateFolder(
                    folder: folder, ledger: try SQLiteLedger(folder: folder), lock: lock, isNewLedger: !existed)
            } catch let error where error.code == .corrupt && fresh {
                let aside = try SQLiteLedger.moveAside(in: folder)
                Output.error("pipeline: \(error.message)\npipeline: --fresh: moved the damaged ledger to \(aside.path)")
                return StateFolder(
                    folder: folder, ledger: try SQLiteLedger(folder: folder), lock: lock, isNewLedger: true)
            }
        } catch {
            throw .failed(error)
        }
    }

    /// The pid of the process holding the state folder's lock, or nil when it is free.
    static func busyHolder(_ path: String) -> Int32? {
        StateLock.holding(URL(fileURLWithPath: path).standardizedFileURL)?.pid
    }

    /// The process holding the state folder now, and the workflow it watches when it is a `pipeline watch` (nil for
    /// a `pipeline run`); nil when the folder is free. Pid and command come from one read of the lock file.
    static func holder(_ path: String) -> (pid: Int32, watching: String?)? {
        guard let holder = StateLock.holding(URL(fileURLWithPath: path).standardizedFileURL) else { return nil }
        let watching = holder.command.flatMap { command -> String? in
            guard command.hasPrefix(watchCommand) else { return nil }
            return String(command.dropFirst(watchCommand.count))
        }
        return (holder.pid, watching)
    }

    /// What a `pipeline watch` names itself in the lock file, before the name of the workflow it runs.
    private static let watchCommand = "watch "

    /// Opens an existing ledger to read it (nil when the folder has none); takes no lock, writes nothing.
    static func openForReading(_ path: String) throws(CommandFailure) -> StateFolder? {
        let folder = URL(fileURLWithPath: path).standardizedFileURL
        do {
            try SQLiteLedger.checkLayout(of: folder, fresh: false)
            guard SQLiteLedger.exists(in: folder) else { return nil }
            return StateFolder(folder: folder, ledger: try SQLiteLedger(readingOnly: folder), lock: nil)
        } catch {
            throw .failed(error)
        }
    }

    /// Closes the ledger (folding its write-ahead log back into the database), then lets the lock go.
    func close() {
        do {
            try ledger.close()
        } catch {
            Output.error("pipeline: \(error)")
        }
        withExtendedLifetime(lock) {}
    }

    /// What the ledger knows of a workflow's items; a ledger that cannot be read ends the command with exit
    /// code 1.
    func snapshot(of workflow: Workflow) async throws(CommandFailure) -> LedgerSnapshot {
        do {
            return try await ledger.snapshot(workflow: workflow.name)
        } catch {
            throw .failed(error)
        }
    }

    /// Removes the scratch folders of `items` (forgotten, or a workflow's with `--fresh`), or every one when
    /// `items` is nil.
    func removeScratch(of items: [Int64]? = nil) {
        let folders = items.map { $0.map { scratchRoot.appendingPathComponent("\($0)") } } ?? [scratchRoot]
        for folder in folders { try? FileManager.default.removeItem(at: folder) }
    }
}
