import Foundation
import Hummingbird
import PipelineKit
import StageKit

@testable import Dashboard

/// A state folder's ledger in a temporary folder, written as a run writes it, and a dashboard that reads it.
struct LedgerFixture {
    let folder: URL
    let ledger: SQLiteLedger

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("dashboard-\(UUID().uuidString)")
        ledger = try SQLiteLedger(folder: folder)
    }

    /// Admits a new item of workflow `w` at `name`; returns its number.
    func admit(_ name: String, workflow: String = "w") async throws -> Int64 {
        let input = InputItem(path: "/in/\(name)", relativePath: name, size: 10, modified: 0)
        let admission = ItemAdmission(item: nil, newVersion: false, fingerprint: "fp-\(name)", input: input)
        return try await ledger.admit(admission, workflow: workflow).ref.item
    }

    /// A dashboard over the folder, read per request as `pipeline serve` reads it, with no process holding the
    /// folder: a retry is left in the ledger for the next run.
    func application(access: DashboardAccess = DashboardAccess()) -> some ApplicationProtocol {
        let (folder, ledger) = (self.folder, self.ledger)
        let source = DashboardSource.stateFolder(
            location: folder.path, openLedger: { try SQLiteLedger(readingOnly: folder) },
            requestCancel: { _ in false },
            requestRetry: { StateFolderRetry(items: try await $0.request(in: ledger)) })
        return Application(router: DashboardServer.router(source: source, host: "127.0.0.1", access: access))
    }

    func remove() {
        try? ledger.close()
        try? FileManager.default.removeItem(at: folder)
    }
}
