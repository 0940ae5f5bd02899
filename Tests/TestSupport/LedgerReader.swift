public import Foundation
import GRDB
public import StageKit

/// One item of a state folder's ledger as a test sees it, read straight from the SQLite file.
public struct LedgerEntry: Sendable {
    /// The item's number.
    public var id: Int64
    /// Where it was last seen.
    public var path: String
    /// Its path relative to the input folder.
    public var relativePath: String
    /// Its status (`succeeded`, `failed`, …).
    public var status: String
    /// Its current version.
    public var version: Int
    /// The current version's stage checkpoints by stage id, as stored (JSON).
    public var stages: [String: JSONValue]
}

/// The items of a workflow in `<state>/ledger.sqlite`, as they are now; empty while there is no ledger. Each
/// checkpoint is one committed transaction, so a read sees an older or a newer checkpoint, never part of one.
/// Tests that wait for a checkpoint before they kill read them here, while the run goes on. The read happens
/// on a thread of its own, read-only, so it neither holds up the tests' cooperative threads nor the writer.
public func ledgerEntries(under state: URL, workflow: String) async -> [LedgerEntry] {
    await readLedger(under: state) { db in
        var entries: [Int64: LedgerEntry] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM items WHERE workflow = ?", arguments: [workflow]) {
            entries[row["id"]] = LedgerEntry(
                id: row["id"], path: row["path"], relativePath: row["relativePath"], status: row["status"],
                version: row["version"], stages: [:])
        }
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT stages.item, stages.stage, stages.record FROM stages JOIN items ON items.id = stages.item
                WHERE items.workflow = ? AND stages.version = items.version
                """, arguments: [workflow])
        for row in rows {
            let item: Int64 = row["item"]
            entries[item]?.stages[row["stage"]] = try JSONValue(parsing: row["record"] as String)
        }
        return entries.values.sorted { $0.id < $1.id }
    } ?? []
}

/// How many items of a workflow have each status (`succeeded`, `failed`, `pending`, …): a cheap read for
/// tests that poll while a run goes on.
public func ledgerItemCounts(under state: URL, workflow: String) async -> [String: Int] {
    await readLedger(under: state) { db in
        var counts: [String: Int] = [:]
        let rows = try Row.fetchAll(
            db, sql: "SELECT status, count(*) AS n FROM items WHERE workflow = ? GROUP BY status",
            arguments: [workflow])
        for row in rows { counts[row["status"]] = row["n"] }
        return counts
    } ?? [:]
}

/// How many stage checkpoints of a workflow's current versions have each status.
public func ledgerStageCounts(under state: URL, workflow: String) async -> [String: Int] {
    await readLedger(under: state) { db in
        var counts: [String: Int] = [:]
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT stages.status, count(*) AS n FROM stages JOIN items ON items.id = stages.item
                WHERE items.workflow = ? AND stages.version = items.version GROUP BY stages.status
                """, arguments: [workflow])
        for row in rows { counts[row["status"]] = row["n"] }
        return counts
    } ?? [:]
}

/// The stage checkpoints of a workflow's items by relative path and stage id (see ``ledgerEntries(under:workflow:)``).
public func stageCheckpoints(under state: URL, workflow: String) async -> [String: [String: JSONValue]] {
    Dictionary(
        await ledgerEntries(under: state, workflow: workflow).map { ($0.relativePath, $0.stages) },
        uniquingKeysWith: { first, _ in first })
}

/// Runs `body` on a read-only connection to the ledger, on a thread of its own; nil while there is no ledger
/// or it cannot be read. While no process has the ledger open (no WAL file) it is opened as immutable, so
/// the read leaves no file behind.
private func readLedger<T: Sendable>(under state: URL, _ body: @escaping @Sendable (Database) throws -> T) async
    -> T?
{
    let file = state.appendingPathComponent("ledger.sqlite")
    return await BlockingWork.runLong {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        let idle = !FileManager.default.fileExists(atPath: file.path + "-wal")
        let path = idle ? "file:\(file.path)?immutable=1" : file.path
        return try? DatabaseQueue(path: path, configuration: configuration).read(body)
    }
}
