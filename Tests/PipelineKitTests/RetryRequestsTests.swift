import Foundation
import GRDB
import StageKit
import TestSupport
import Testing

@testable import PipelineKit

/// Retry requests in a state folder's ledger: only failed items are asked for, a run answers those of the items it
/// takes up, and a ledger an earlier pipeline made (without the table) reads as having none until a writer adds it.
@Suite struct RetryRequestsTests {
    /// Admits items named `names` of workflow `w`; returns their numbers.
    static func admit(_ names: [String], in ledger: SQLiteLedger) async throws -> [Int64] {
        var ids: [Int64] = []
        for name in names {
            let input = InputItem(path: "/in/\(name)", relativePath: name, size: 10, modified: 0)
            let admission = ItemAdmission(item: nil, newVersion: false, fingerprint: "fp-\(name)", input: input)
            ids.append(try await ledger.admit(admission, workflow: "w").ref.item)
        }
        return ids
    }

    @Test func onlyFailedItemsAreAskedForAndARunAnswersThoseItTakesUp() async throws {
        let scratch = try Scratch()
        let ledger = try SQLiteLedger(folder: scratch.path("state"))
        defer { try? ledger.close() }
        let ids = try await Self.admit(["a.mov", "b.mov", "c.mov", "done.mov"], in: ledger)
        try await ledger.setStatus(.failed, of: Array(ids.prefix(3)))
        try await ledger.setStatus(.succeeded, of: [ids[3]])
        #expect(try await ledger.requestRetry(of: [ids[0], ids[3]]) == [ids[0]])
        var query = ItemQuery(status: .failed)
        query.name = "b."
        #expect(try await ledger.requestRetry(matching: query) == [ids[1]])
        #expect(try await ledger.retryRequests(workflow: "w") == [ids[0]: "/in/a.mov", ids[1]: "/in/b.mov"])
        #expect(try await ledger.retryRequests(workflow: "other").isEmpty)

        // A plan that runs a.mov (and c.mov, not asked for) and reuses b.mov answers a.mov's request only.
        let input = { (name: String) in InputItem(path: "/in/\(name)", relativePath: name, size: 10, modified: 0) }
        let known = try await ledger.snapshot(workflow: "w").items
        let plan = BatchPlan(
            items: [
                PlannedItem(
                    input: input("a.mov"), fingerprint: "fp-a.mov", action: .run(.resume(.failed)),
                    known: known.first { $0.id == ids[0] }),
                PlannedItem(
                    input: input("b.mov"), fingerprint: "fp-b.mov",
                    action: .reuse(ItemVersion(item: ids[1], version: 1), reason: ReuseReason())),
                PlannedItem(
                    input: input("c.mov"), fingerprint: "fp-c.mov", action: .run(.resume(.failed)),
                    known: known.first { $0.id == ids[2] }),
            ], passedOver: [], cacheEntries: [])
        try await ledger.answerRetryRequests(takenUpBy: plan)
        #expect(try await ledger.retryRequests(workflow: "w") == [ids[1]: "/in/b.mov"])
        // A forgotten item's request goes with it.
        try await ledger.forget(items: [ids[1]])
        #expect(try await ledger.retryRequests(workflow: "w").isEmpty)
    }

    /// A request for an item that ran since (asked for after its run's plan answered the requests) means nothing:
    /// it is not read while the item is done, and the next answer withdraws it, as it does a gone file's.
    @Test func onlyRequestsOfItemsStillFailedCount() async throws {
        let scratch = try Scratch()
        let ledger = try SQLiteLedger(folder: scratch.path("state"))
        defer { try? ledger.close() }
        let ids = try await Self.admit(["a.mov", "b.mov", "gone.mov"], in: ledger)
        try await ledger.setStatus(.failed, of: ids)
        #expect(try await ledger.requestRetry(of: ids) == Set(ids))
        try await ledger.setStatus(.succeeded, of: [ids[0]])
        #expect(try await ledger.retryRequests(workflow: "w") == [ids[1]: "/in/b.mov", ids[2]: "/in/gone.mov"])
        try await ledger.withdrawRetryRequests(of: [ids[2]])
        #expect(try await ledger.retryRequests(workflow: "w") == [ids[1]: "/in/b.mov"])
        // Failed again (its run failed), a.mov is not run once more for the old request: it went with the answer.
        try await ledger.setStatus(.failed, of: [ids[0]])
        #expect(try await ledger.retryRequests(workflow: "w") == [ids[1]: "/in/b.mov"])
        let files = try await ledger.files(of: [ids[1], ids[2]])
        #expect(files[ids[1]]?.path == "/in/b.mov" && files[ids[2]]?.workflow == "w" && files.count == 2)
    }

    /// A ledger from before retry requests: a reader finds none and adds nothing; a writer adds the table.
    @Test func aLedgerWithoutTheTableGetsItFromAWriter() async throws {
        let scratch = try Scratch()
        let folder = scratch.path("state")
        let ledger = try SQLiteLedger(folder: folder)
        let ids = try await Self.admit(["a.mov"], in: ledger)
        try await ledger.setStatus(.failed, of: ids)
        try ledger.close()
        try await DatabaseQueue(path: ledger.file.path).write { try $0.execute(sql: "DROP TABLE retryRequests") }

        let reader = try SQLiteLedger(readingOnly: folder)
        #expect(try await reader.retryRequests(workflow: "w").isEmpty)
        try reader.close()
        #expect(try await DatabaseQueue(path: ledger.file.path).read { try $0.tableExists("retryRequests") } == false)
        let writer = try SQLiteLedger(folder: folder)
        defer { try? writer.close() }
        #expect(try await writer.requestRetry(of: ids) == Set(ids))
        #expect(try await writer.retryRequests(workflow: "w") == [ids[0]: "/in/a.mov"])
    }
}
