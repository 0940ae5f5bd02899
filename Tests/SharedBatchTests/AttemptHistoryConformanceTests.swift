import Foundation
import PipelineKit
import StageKit
import Testing

@testable import SharedBatch

/// Items' histories in both ledgers (``AttemptHistory``): versions, checkpoints and the attempts that did not simply
/// succeed, at most ``StageAttempt/keptPerItem`` an item, gone with the item; in a shared batch, with the worker.
@Suite struct AttemptHistoryConformanceTests {
    @Test(arguments: LedgerKind.allCases)
    func anItemsHistoryHasItsVersionsCheckpointsAndAttempts(_ kind: LedgerKind) async throws {
        try await kind.withStore { store in
            let history = try #require(store as? any AttemptHistory)
            let first = try await store.admit(admission(nil, new: false, "full:1:one"), workflow: "w")
            let id = first.ref.item
            try await history.recordAttempt(
                attempt(version: 1, "up", 1, .failed, log: ["warning: ffmpeg: moov atom not found"]), of: id)
            let second = try await store.admit(admission(id, new: true, "full:1:two"), workflow: "w")
            try await store.save(record("up", .succeeded), for: second.ref)
            try await history.recordAttempt(attempt(version: 2, "up", 2, .interrupted, log: ["notice: slow"]), of: id)

            let read = try #require(try await history.history(of: id))
            #expect(read.versions.map(\.version) == [1, 2])
            #expect(read.versions.map(\.path) == ["/m/full:1:one.mp4", "/m/full:1:two.mp4"])
            #expect(read.versions.allSatisfy { abs($0.createdAt.timeIntervalSinceNow) < 600 })
            #expect(read.checkpoints[2]?.map(\.stage) == ["up"])
            #expect(read.attempts.map(\.outcome) == [.failed, .interrupted])
            let failed = try #require(read.attempts.first)
            #expect(failed.version == 1 && failed.stage == "up" && failed.attempt == 1)
            #expect(failed.error == "sh exited with status 3: line 1\nline 2" && failed.errorKind == .commandFailed)
            #expect(failed.log == ["warning: ffmpeg: moov atom not found"] && failed.seconds == 1.234)
            #expect(failed.worker == nil, "a store that is not a worker's names none")
            #expect(try await history.history(of: id + 1000) == nil)

            try await store.forget(items: [id])
            #expect(try await history.history(of: id) == nil)
        }
    }

    @Test(arguments: LedgerKind.allCases)
    func anItemKeepsItsLatestAttemptsOnly(_ kind: LedgerKind) async throws {
        try await kind.withStore { store in
            let history = try #require(store as? any AttemptHistory)
            let looping = try await store.admit(admission(nil, new: false, "full:1:one"), workflow: "w").ref.item
            let other = try await store.admit(admission(nil, new: false, "full:1:two"), workflow: "w").ref.item
            try await history.recordAttempt(attempt(version: 1, "up", 1, .failed), of: other)
            let made = StageAttempt.keptPerItem + 5
            for number in 1...made {
                try await history.recordAttempt(attempt(version: 1, "up", number, .failed), of: looping)
            }
            let kept = try #require(try await history.history(of: looping)).attempts.map(\.attempt)
            #expect(kept == Array((made - StageAttempt.keptPerItem + 1)...made))
            #expect(try await history.history(of: other)?.attempts.count == 1, "another item keeps its own")
        }
    }

    /// A worker's store records the worker that holds the item's lease as the one that ran the attempt.
    @Test func aWorkersAttemptNamesTheWorker() async throws {
        try await LedgerKind.postgres.withDatabase { database in
            let (command, worker, _, admitted) = try await StateStoreConformanceTests.itemHeldByAWorker(in: database)
            try await worker.recordAttempt(attempt(version: 1, "up", 1, .interrupted), of: admitted.ref.item)
            let read = try #require(try await command.history(of: admitted.ref.item))
            #expect(read.attempts.map(\.worker) == ["worker"])
            #expect(read.attempts.map(\.outcome) == [.interrupted])
        }
    }
}

private func admission(_ item: Int64?, new: Bool, _ fingerprint: String) -> ItemAdmission {
    ItemAdmission(
        item: item, newVersion: new, fingerprint: fingerprint,
        input: InputItem(path: "/m/\(fingerprint).mp4", relativePath: "\(fingerprint).mp4", size: 1, modified: 0))
}

private func record(_ stage: String, _ status: StageRecord.Status) -> StageRecord {
    var record = StageRecord(stage: stage, uses: "exec", status: status, optionsHash: "h")
    record.attempts = 2
    return record
}

private func attempt(
    version: Int, _ stage: String, _ number: Int, _ outcome: StageAttempt.Outcome, log: [String] = []
) -> StageAttempt {
    let start = Date(timeIntervalSince1970: 1_800_000_000 + Double(number))
    return StageAttempt(
        version: version, stage: stage, attempt: number, startedAt: start, finishedAt: start + 1.234, seconds: 1.234,
        outcome: outcome,
        error: FailureReport(message: "sh exited with status 3: line 1\nline 2", kind: .commandFailed), log: log)
}
