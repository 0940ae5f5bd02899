public import Foundation
import GRDB

/// Makes the ledger under `state` look as an earlier pipeline left it, with `sql` (dropping a table that pipeline did
/// not have, say), while no process holds it.
public func downgradeLedger(under state: URL, _ sql: String) throws {
    let queue = try DatabaseQueue(path: state.appendingPathComponent("ledger.sqlite").path)
    try queue.write { try $0.execute(sql: sql) }
    try queue.close()
}
