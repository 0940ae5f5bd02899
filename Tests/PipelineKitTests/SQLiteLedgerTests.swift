import Foundation
import GRDB
import StageKit
import TestSupport
import Testing

@testable import PipelineKit

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

    /// A webhook's URL is its secret: keys that an earlier pipeline recorded with the URL at their end name the
    /// webhook by its digest once a writer opens the ledger, and the URL is nowhere in the file.
    @Test func notificationKeysNameWebhooksByDigest() async throws {
        let scratch = try Scratch()
        let folder = scratch.path("state")
        let url = "https://hooks.slack.com/services/T000/B000/SECRETPART"
        let old = "itemFailed clips 1F2E a file with spaces.mp4 \(url)"
        let ledger = try SQLiteLedger(folder: folder)
        try ledger.close()
        let queue = try DatabaseQueue(path: ledger.file.path)
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO notifications VALUES (?, 0), ('batchFinished abc', 0)", arguments: [old])
        }
        try queue.close()

        let reopened = try SQLiteLedger(folder: folder)
        let named = "itemFailed clips 1F2E a file with spaces.mp4 \(WebhookName.of(url))"
        #expect(try await reopened.claimNotification(named) == false, "the old key was not renamed")
        #expect(try await reopened.claimNotification("batchFinished abc") == false)
        try reopened.close()
        let bytes = try Data(contentsOf: ledger.file)
        #expect(bytes.range(of: Data("SECRETPART".utf8)) == nil)
        #expect(WebhookName.of(url).hasPrefix("webhook:") && WebhookName.of(url).count == 8 + 64)
        #expect(WebhookName.replacingURL(in: "batchFinished abc") == nil)
    }

    /// A ledger made before runs recorded their plans: read as it is, it has no run under way to count; a run an
    /// older pipeline starts (naming only its own columns) counts none either, once a writer added the columns.
    @Test func aLedgerFromBeforeRunPlansCountsNoQueuedFiles() async throws {
        let scratch = try Scratch()
        let folder = scratch.path("state")
        // Held as the older run holds it, so the run is under way and its columns are what is read.
        let lock = try StateLock(folder: folder)
        defer { withExtendedLifetime(lock) {} }
        let ledger = try SQLiteLedger(folder: folder)
        try ledger.close()
        let queue = try DatabaseQueue(path: ledger.file.path)
        try await queue.write { db in
            try db.execute(sql: "ALTER TABLE runs DROP COLUMN newItems; ALTER TABLE runs DROP COLUMN itemsBefore")
            try db.execute(
                sql: "INSERT INTO runs(workflow, file, stages, startedAt) VALUES ('old', 'wf.json', 'a', ?)",
                arguments: [Date().timeIntervalSince1970])
        }
        try queue.close()

        let reader = try SQLiteLedger(readingOnly: folder)
        #expect(try await reader.runsUnderWay().isEmpty)
        try reader.close()
        let writer = try SQLiteLedger(folder: folder)
        #expect(try await writer.runsUnderWay().isEmpty, "the older run planned nothing it said")
        try writer.close()
        let columns = try await DatabaseQueue(path: ledger.file.path).read { db in
            try db.columns(in: "runs").map(\.name)
        }
        #expect(columns.contains("newItems") && columns.contains("itemsBefore"))
    }

    /// The counts a dashboard reads follow admissions, status changes and forgotten items, and a ledger made
    /// before they existed is counted from its items until a writer opens it and fills them.
    @Test func theDashboardsCountsFollowEveryWrite() async throws {
        let scratch = try Scratch()
        let folder = scratch.path("state")
        let ledger = try SQLiteLedger(folder: folder)
        var ids: [Int64] = []
        for index in 0..<6 {
            let input = InputItem(
                path: "/in/f\(index)", relativePath: "f\(index)", size: Int64(10 * (index + 1)), modified: 0)
            let admission = ItemAdmission(item: nil, newVersion: false, fingerprint: "fp\(index)", input: input)
            ids.append(try await ledger.admit(admission, workflow: "w").ref.item)
        }
        try await ledger.setStatus(.succeeded, of: Array(ids[0..<4]))
        try await ledger.setStatus(.failed, of: [ids[4]])
        try await ledger.setStatus(.pending, of: [ids[0]])
        try await ledger.forget(items: [ids[1]])
        let expected: [ItemStatus: ItemTally] = [
            .pending: ItemTally(count: 2, bytes: 10 + 60), .succeeded: ItemTally(count: 2, bytes: 30 + 40),
            .failed: ItemTally(count: 1, bytes: 50),
        ]
        #expect(try await ledger.statusCounts() == ["w": expected])
        #expect(try await ledger.doneByMinute(workflow: "w", minutes: 120).map(\.done).reduce(0, +) == 2)

        // A ledger of an earlier pipeline: no counts yet.
        try await ledger.write { db in
            try db.execute(
                sql: """
                    DROP TRIGGER itemsTalliedOnInsert; DROP TRIGGER itemsTalliedOnDelete;
                    DROP TRIGGER itemsTalliedOnUpdate; DROP TABLE itemTallies; DROP TABLE doneMinutes;
                    """)
        }
        try ledger.close()
        // A dashboard reads it as it is (counted from the items), then the next writer adds the counts.
        let read = try SQLiteLedger(readingOnly: folder)
        #expect(try await read.statusCounts() == ["w": expected])
        #expect(try await read.doneByMinute(workflow: "w", minutes: 120).map(\.done).reduce(0, +) == 2)
        try read.close()
        let reopened = try SQLiteLedger(folder: folder)
        #expect(try await reopened.statusCounts() == ["w": expected])
        #expect(try await reopened.doneByMinute(workflow: "w", minutes: 120).map(\.done).reduce(0, +) == 2)
        try reopened.close()
    }

    /// What the ledger keeps per item stays small (a million items): an admitted item's path is kept with its
    /// version only, and `paths` gets the paths a done item is seen at later.
    @Test func anItemIsStoredWithoutRepeatedPaths() async throws {
        let scratch = try Scratch()
        let ledger = try SQLiteLedger(folder: scratch.path("state"))
        let input = InputItem(path: "/in/clip.mp4", relativePath: "clip.mp4", size: 10, modified: 0)
        let ref = try await ledger.admit(
            ItemAdmission(item: nil, newVersion: false, fingerprint: "fp", input: input), workflow: "w"
        ).ref
        let record = StageRecord(stage: "export", uses: "set", status: .succeeded, optionsHash: "h")
        try await ledger.save(record, for: ref)
        let moved = InputItem(path: "/in/moved/clip.mp4", relativePath: "moved/clip.mp4", size: 10, modified: 0)
        try await ledger.recordPaths([ItemSighting(item: ref.item, input: moved)])

        let (paths, versions, stored) = try await ledger.read { db in
            (
                try String.fetchAll(db, sql: "SELECT path FROM paths"),
                try String.fetchAll(db, sql: "SELECT path FROM versions"),
                try String.fetchOne(db, sql: "SELECT record FROM stages") ?? ""
            )
        }
        #expect(paths == ["/in/moved/clip.mp4"])
        #expect(versions == ["/in/clip.mp4"])
        #expect(try StageRecord(decoding: stored) == record)
        try ledger.close()
    }

    /// A run that never finished is interrupted when the process holding the folder now took the lock after it
    /// started (a later run's process, after a `kill -9`), while that process's own run reads running.
    @Test func anOlderUnfinishedRunIsInterruptedWhileALaterProcessHoldsTheFolder() async throws {
        let scratch = try Scratch()
        let ledger = try SQLiteLedger(folder: scratch.root)
        func run() async throws -> Int64 {
            try await ledger.beginRun(
                RunRecord(workflow: "w", file: "w.json", stages: ["a"]), caching: [], sightings: [])
        }
        let killed = try await run()
        // Its start lies well beyond the slack of the lock file's timestamp.
        try await ledger.pool.write { db in
            try db.execute(
                sql: "UPDATE runs SET startedAt = startedAt - ? WHERE id = ?",
                arguments: [StateLock.stampSlack + 60, killed])
        }
        let lock = try StateLock(folder: scratch.root)
        let underWay = try await run()
        let runs = try await ledger.pastRuns(limit: 10, offset: 0).runs
        #expect(runs.map { "\($0.id) \($0.outcome)" } == ["\(underWay) running", "\(killed) interrupted"])
        withExtendedLifetime(lock) {}
    }
}
