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
/// Tests that wait for a checkpoint before they kill read them here, while the run goes on.
public func ledgerEntries(under state: URL, workflow: String) -> [LedgerEntry] {
    let file = state.appendingPathComponent("ledger.sqlite")
    guard FileManager.default.fileExists(atPath: file.path) else { return [] }
    do {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let database = try DatabaseQueue(path: file.path, configuration: configuration)
        return try database.read { db in
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
        }
    } catch {
        return []
    }
}

/// The stage checkpoints of a workflow's items by relative path and stage id (see ``ledgerEntries(under:workflow:)``).
public func stageCheckpoints(under state: URL, workflow: String) -> [String: [String: JSONValue]] {
    Dictionary(
        ledgerEntries(under: state, workflow: workflow).map { ($0.relativePath, $0.stages) },
        uniquingKeysWith: { first, _ in first })
}
