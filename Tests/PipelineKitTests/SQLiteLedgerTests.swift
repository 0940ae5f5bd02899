import Foundation
import PipelineKit
import TestSupport
import Testing

@Suite struct SQLiteLedgerTests {
    /// The database file's format versions (header bytes 18 and 19): 2 and 2 for write-ahead logging.
    private func formatVersions(_ file: URL) throws -> [UInt8] {
        Array(try Data(contentsOf: file)[18...19])
    }

    private func walSize(_ ledger: SQLiteLedger) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: ledger.file.path + "-wal"))?[.size] as? Int
    }

    @Test func theLedgerIsWriteAheadLoggedAndOpeningItWritesNothing() throws {
        let scratch = try Scratch()
        let folder = scratch.path("state")
        // Creating the tables is the first commit.
        let created = try SQLiteLedger(folder: folder)
        #expect((walSize(created) ?? 0) > 0, "the commit went to a write-ahead log")
        try created.close()
        #expect(walSize(created) == nil, "a clean close folds the log back into the database")
        #expect(try formatVersions(created.file) == [2, 2])

        // Opening a closed ledger commits nothing: its log is there for readers, and empty.
        let reopened = try SQLiteLedger(folder: folder)
        #expect(walSize(reopened) == 0)
        try reopened.close()
    }
}
