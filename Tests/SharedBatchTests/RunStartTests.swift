import Foundation
import PipelineKit
import StageKit
import Synchronization
import TestSupport
import Testing

/// The fingerprint cache has one writer: a plan writes nothing, and a run commits the fingerprints its plan made
/// in its first transaction, with the run's record, on either ledger.
@Suite struct RunStartTests {
    @Test(arguments: LedgerKind.allCases)
    func aFirstRunCommitsTheFingerprintsInItsFirstTransaction(_ kind: LedgerKind) async throws {
        let scratch = try Scratch()
        let names = ["a.txt", "b.txt", "c.txt"]
        for name in names { try scratch.write("in/\(name)", "content of \(name)") }
        let folder = scratch.path("in").path
        var registry = StageRegistry()
        try registry.register(NoteStage.self)
        let workflow = try WorkflowLoader(registry: registry).load(
            data: Data(#"{"version": 1, "name": "t", "stages": [{"id": "note", "uses": "test.note"}]}"#.utf8),
            file: "t.json")
        try await kind.withStore { ledger in
            let store = RecordingStore(ledger)
            let plan = try await BatchPlanner(workflow: workflow, registry: registry).plan(
                try InputDiscovery.discover(paths: [folder], include: [], exclude: [], recursive: false),
                store: store, workflow: "t")
            #expect(store.writes.isEmpty, "planning writes nothing")
            #expect(plan.cacheEntries.count == names.count)

            let runner = Runner(
                workflow: workflow, registry: registry, store: store, scratchRoot: scratch.path("scratch"),
                environment: [:], sink: QuietSink())
            let outcome = try await runner.run(plan, file: "t.json")
            #expect(outcome.summary.failed == 0)
            #expect(store.writes.first == "beginRun(caching: 3)", "the run's first write carries the fingerprints")
            #expect(store.writes.filter { $0.hasPrefix("beginRun") || $0.hasPrefix("cacheFingerprints") }.count == 1)
            let cached = try await ledger.cachedFingerprints(pathsFrom: folder + "/", through: folder + "/~")
            #expect(Set(cached.keys) == Set(names.map { "\(folder)/\($0)" }))

            // The next plan finds every fingerprint in the cache: it reads no file and has nothing to save.
            let next = try await BatchPlanner(workflow: workflow, registry: registry).plan(
                try InputDiscovery.discover(paths: [folder], include: [], exclude: [], recursive: false),
                store: store, workflow: "t")
            #expect(next.cacheEntries.isEmpty)
        }
    }
}

/// A stage that does nothing, for runs whose stages do not matter.
private struct NoteStage: Stage {
    struct Options: StageOptions {}
    struct Outputs: StageOutputs {}
    static let stageType = "test.note"
    static let summary = "Does nothing (tests only)."
    init() {}
    func run(_ options: Options, context: StageContext) async throws -> Outputs { Outputs() }
}

/// Drops a run's events.
struct QuietSink: RunEventSink {
    func emit(_ event: any RunEvent) {}
}

/// A store that passes every call to another and notes its writes in order.
private final class RecordingStore: StateStore {
    let store: any StateStore
    private let log = Mutex<[String]>([])

    init(_ store: any StateStore) {
        self.store = store
    }

    /// The writes so far, by name (a run's start with how many fingerprints it carried).
    var writes: [String] { log.withLock { $0 } }

    private func note(_ write: String) {
        log.withLock { $0.append(write) }
    }

    var location: String { store.location }
    var holdsDeferredCommits: Bool { store.holdsDeferredCommits }

    func snapshot(workflow: String) async throws(StateError) -> LedgerSnapshot {
        try await store.snapshot(workflow: workflow)
    }

    func items(workflow: String, pathsFrom first: String, through last: String) async throws(StateError)
        -> [LedgerItem]
    {
        try await store.items(workflow: workflow, pathsFrom: first, through: last)
    }

    func items(workflow: String, fingerprints: [String]) async throws(StateError) -> [LedgerItem] {
        try await store.items(workflow: workflow, fingerprints: fingerprints)
    }

    func cachedFingerprints(pathsFrom first: String, through last: String) async throws(StateError)
        -> [String: FingerprintCacheEntry]
    {
        try await store.cachedFingerprints(pathsFrom: first, through: last)
    }

    func cacheFingerprints(_ entries: [FingerprintCacheEntry]) async throws(StateError) {
        note("cacheFingerprints(\(entries.count))")
        try await store.cacheFingerprints(entries)
    }

    func beginRun(_ run: RunRecord, caching entries: [FingerprintCacheEntry], sightings: [ItemSighting])
        async throws(StateError) -> Int64
    {
        note("beginRun(caching: \(entries.count))")
        return try await store.beginRun(run, caching: entries, sightings: sightings)
    }

    func finishRun(_ run: Int64, summary: RunSummary) async throws(StateError) {
        note("finishRun")
        try await store.finishRun(run, summary: summary)
    }

    func admit(_ admission: ItemAdmission, workflow: String) async throws(StateError) -> AdmittedItem {
        note("admit")
        return try await store.admit(admission, workflow: workflow)
    }

    func recordPaths(_ sightings: [ItemSighting]) async throws(StateError) {
        note("recordPaths")
        try await store.recordPaths(sightings)
    }

    func save(_ record: StageRecord, for item: ItemVersion) async throws(StateError) {
        note("save")
        try await store.save(record, for: item)
    }

    func removeStages(_ stages: [String], for item: ItemVersion) async throws(StateError) {
        note("removeStages")
        try await store.removeStages(stages, for: item)
    }

    func finish(_ item: ItemVersion, result: ItemResult, digest: String?) async throws(StateError) {
        note("finish")
        try await store.finish(item, result: result, digest: digest)
    }

    func setStatus(_ status: ItemStatus, of items: [Int64]) async throws(StateError) {
        note("setStatus")
        try await store.setStatus(status, of: items)
    }

    func requestCancel(of items: [Int64]) async throws(StateError) {
        note("requestCancel")
        try await store.requestCancel(of: items)
    }

    func answerCancelRequests(for items: [Int64]) async throws(StateError) {
        note("answerCancelRequests")
        try await store.answerCancelRequests(for: items)
    }

    func cancelRequests(workflow: String) async throws(StateError) -> Set<Int64> {
        try await store.cancelRequests(workflow: workflow)
    }

    func checkpoints(workflow: String, items: Set<Int64>?) async throws(StateError) -> [Int64: [String: StageRecord]] {
        try await store.checkpoints(workflow: workflow, items: items)
    }

    func previousOutputs(workflow: String, items: Set<Int64>?) async throws(StateError)
        -> [Int64: [String: JSONValue]]
    {
        try await store.previousOutputs(workflow: workflow, items: items)
    }

    func forget(items: [Int64]) async throws(StateError) {
        note("forget")
        try await store.forget(items: items)
    }

    func forget(workflow: String) async throws(StateError) -> [Int64] {
        note("forget")
        return try await store.forget(workflow: workflow)
    }

    func workflows() async throws(StateError) -> [RunRecord] {
        try await store.workflows()
    }

    func outputClaims(paths: [String]) async throws(StateError) -> [String: OutputClaim] {
        try await store.outputClaims(paths: paths)
    }

    func claimOutputs(_ paths: [String], for item: ItemVersion, workflow: String) async throws(StateError)
        -> OutputClaim?
    {
        if !paths.isEmpty { note("claimOutputs") }
        return try await store.claimOutputs(paths, for: item, workflow: workflow)
    }
}
