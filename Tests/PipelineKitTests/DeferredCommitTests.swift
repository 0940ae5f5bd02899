import Foundation
import GRDB
import NIOConcurrencyHelpers
import StageKit
import TestSupport
import Testing

@testable import PipelineKit

/// The writes that do not wait for a sync of their own (``DeferredCommit``) are synced before a stage runs.
@Suite struct DeferredCommitTests {
    /// The connection's `synchronous` setting (2 is FULL).
    private func synchronous(_ ledger: SQLiteLedger) async throws -> Int? {
        try await ledger.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
    }

    @Test func aDeferredCommitIsHeldUntilTheNextSyncedOne() async throws {
        let sandbox = try Sandbox()
        let ledger = try sandbox.ledger()
        defer { try? ledger.close() }
        #expect(ledger.holdsDeferredCommits, "the tables' commit does not wait for its sync")
        #expect(try await synchronous(ledger) == 2)
        let run = try await ledger.beginRun(
            RunRecord(workflow: "t", file: "t.json", stages: ["a"], newItems: 0), caching: [], sightings: [])
        #expect(ledger.holdsDeferredCommits)
        #expect(try await synchronous(ledger) == 2, "the connection syncs again after a deferred commit")
        #expect(try await ledger.claimNotification("a notice"))
        #expect(!ledger.holdsDeferredCommits, "a synced commit syncs the deferred ones before it")
        try await ledger.finishRun(run, summary: RunSummary(items: 0))
        #expect(ledger.holdsDeferredCommits)
        // A commit that changes no row writes nothing to the log, so it syncs nothing either.
        #expect(try await ledger.claimNotification("a notice") == false)
        #expect(ledger.holdsDeferredCommits)
    }

    /// Closing syncs what is held even when it cannot fold the log into the database file: another connection (here
    /// a reader, as `pipeline status` opens) keeps the log, so the ledger syncs the log itself.
    @Test func closingSyncsTheLogAnotherConnectionKeeps() async throws {
        let sandbox = try Sandbox()
        let ledger = try sandbox.ledger()
        let run = try await ledger.beginRun(
            RunRecord(workflow: "t", file: "t.json", stages: ["a"], newItems: 0), caching: [], sightings: [])
        try await ledger.finishRun(run, summary: RunSummary(items: 0))
        #expect(ledger.holdsDeferredCommits)
        let reader = try SQLiteLedger(readingOnly: sandbox.state)
        defer { try? reader.close() }
        try ledger.close()
        let log = ledger.file.path + "-wal"
        try #require(FileManager.default.fileExists(atPath: log), "the reader keeps the log")
        #expect(!ledger.holdsDeferredCommits, "the close synced the log it could not fold in")
        #expect(try await reader.workflows().map(\.workflow) == ["t"])
    }

    /// The item's admission is not synced on its own: the first stage's start is, before the stage runs (without
    /// that, a stage could reach outside while nothing of its item is on disk). A stage after one whose success was
    /// synced starts without a commit of its own, as before.
    @Test func aStageRunsOnceWhatCameBeforeIsSynced() async throws {
        let registry = try {
            var registry = Sandbox.registry
            try registry.register(GatedStage.self)
            return registry
        }()
        for first in [true, false] {
            let sandbox = try Sandbox()
            let key = UUID().uuidString
            defer { GatedStage.open(key) }
            let before = first ? "" : #"{"id": "a", "uses": "test.probe", "with": {"key": "\#(key)-a"}},"#
            let workflow = """
                {"version": 1, "name": "t", "stages": [\(before)
                  {"id": "gated", "uses": "test.gated", "with": {"key": "\(key)"}}]}
                """
            let run = Task { try await sandbox.run(workflow, registry: registry) }
            try await waitUntil("the gated stage started", limit: .seconds(60)) { GatedStage.started(key) }
            let record = try await sandbox.checkpoint("gated")
            if first {
                #expect(record?.status == .running && record?.attempts == 1, "\(String(describing: record))")
                #expect(try await sandbox.item()?.status == .pending)
            } else {
                #expect(record == nil, "a start after a synced commit waits for the stage's first checkpoint")
            }
            GatedStage.open(key)
            #expect(try await run.value.succeeded == 1)
            #expect(try await sandbox.checkpoint("gated")?.status == .succeeded)
        }
    }
}

/// A stage that says it started and waits until the test opens its gate (tests only).
struct GatedStage: Stage {
    struct Options: StageOptions {
        @Option("The gate's name.") var key: String
    }
    struct Outputs: StageOutputs {}
    static let stageType = "test.gated"
    static let summary = "Waits for the test to let it finish (tests only)."
    /// Per key: whether it started, whether the gate is open.
    private static let gates = NIOLockedValueBox<[String: (started: Bool, open: Bool)]>([:])

    static func started(_ key: String) -> Bool { gates.withLockedValue { $0[key]?.started ?? false } }
    static func open(_ key: String) { gates.withLockedValue { $0[key, default: (false, false)].open = true } }

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        Self.gates.withLockedValue { $0[options.key, default: (false, false)].started = true }
        while !(Self.gates.withLockedValue { $0[options.key]?.open ?? false }) {
            try await Task.sleep(for: .milliseconds(5))
        }
        return Outputs()
    }
}
