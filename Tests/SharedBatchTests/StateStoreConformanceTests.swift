import Foundation
import PipelineKit
import StageKit
import TestSupport
import Testing

@testable import SharedBatch

/// The two ledgers, SQLite (local runs) and PostgreSQL (shared batches), held to the same expectations through
/// ``StateStore``: a rule one store changes alone fails here for that store.
@Suite struct StateStoreConformanceTests {
    @Test(arguments: LedgerKind.allCases)
    func admittingThreeVersionsKeepsOnlyThePreviousOutputs(_ kind: LedgerKind) async throws {
        try await kind.withStore { store in
            let first = try await store.admit(admission(nil, new: false, "full:1:one"), workflow: "w")
            let id = first.ref.item
            #expect(first.ref.version == 1 && first.stages.isEmpty && first.previousOutputs.isEmpty)
            for stage in ["up", "thumb", "notify"] {
                try await store.save(record(stage, .succeeded, output: "v1"), for: first.ref)
            }
            try await store.save(record("probe", .failed), for: first.ref)
            try await store.finish(first.ref, result: result(first.ref, .done), digest: "d1")

            let second = try await store.admit(admission(id, new: true, "full:1:two"), workflow: "w")
            #expect(second.ref == ItemVersion(item: id, version: 2) && second.stages.isEmpty)
            #expect(second.previousOutputs == ["up": "v1", "thumb": "v1", "notify": "v1"])
            let item = try #require(try await store.snapshot(workflow: "w").items.first)
            #expect(item.version == 2 && item.fingerprint == "full:1:two" && item.status == .pending)
            #expect(item.digest == nil, "a new version is not done with any workflow")

            // Version 2 updates `up`, fails `thumb`, does not run `notify` and succeeds in `probe`.
            try await store.save(record("up", .succeeded, output: "v2"), for: second.ref)
            try await store.save(record("thumb", .failed), for: second.ref)
            try await store.save(record("probe", .succeeded, output: "v2"), for: second.ref)
            let resumed = try await store.admit(admission(id, new: false, "full:1:two"), workflow: "w")
            #expect(resumed.ref == second.ref, "resuming keeps the version")
            #expect(Set(resumed.stages.keys) == ["up", "thumb", "probe"])
            #expect(resumed.previousOutputs == second.previousOutputs)

            // Version 3: a stage version 2 did not finish, or did not run, keeps version 1's outputs.
            let third = try await store.admit(admission(id, new: true, "full:1:three"), workflow: "w")
            #expect(third.ref.version == 3 && third.stages.isEmpty)
            let carried: [String: JSONValue] = ["up": "v2", "thumb": "v1", "notify": "v1", "probe": "v2"]
            #expect(third.previousOutputs == carried)
            #expect(try await store.previousOutputs(workflow: "w", items: [id])[id] == carried)
            #expect(try await store.previousOutputs(workflow: "w", items: nil)[id] == carried)
            #expect(try await store.checkpoints(workflow: "w", items: nil)[id] == nil)

            // Version 4, after a version 3 that ran nothing: still the same outputs, version 1's rows are gone.
            let fourth = try await store.admit(admission(id, new: true, "full:1:four"), workflow: "w")
            #expect(fourth.ref.version == 4 && fourth.previousOutputs == carried)
            try await store.save(record("up", .running), for: fourth.ref)
            #expect(try await store.checkpoints(workflow: "w", items: [id])[id].map { Set($0.keys) } == ["up"])
        }
    }

    @Test(arguments: LedgerKind.allCases)
    func newContentTheWorkflowHasTakesUpItsItem(_ kind: LedgerKind) async throws {
        try await kind.withStore { store in
            let first = try await store.admit(admission(nil, new: false, "full:1:one"), workflow: "w")
            let copy = InputItem(path: "/m/copy.mp4", relativePath: "copy.mp4", size: 1, modified: 0)
            let again = try await store.admit(
                ItemAdmission(item: nil, newVersion: false, fingerprint: "full:1:one", input: copy), workflow: "w")
            #expect(again.ref == first.ref)
            let other = try await store.admit(admission(nil, new: false, "full:1:one"), workflow: "other")
            #expect(other.ref.item != first.ref.item, "another workflow's item is another item")
            let items = try await store.snapshot(workflow: "w").items
            #expect(items.map(\.input.path) == ["/m/copy.mp4"])
        }
    }

    @Test(arguments: LedgerKind.allCases)
    func anItemsStatusFollowsHowItsRunEnded(_ kind: LedgerKind) async throws {
        try await kind.withStore { store in
            let admitted = try await store.admit(admission(nil, new: false, "full:1:one"), workflow: "w")
            let ref = admitted.ref
            func current() async throws -> LedgerItem? { try await store.snapshot(workflow: "w").items.first }

            var failed = result(ref, .failed)
            failed.reason = "the upload was refused"
            failed.errorKind = .network
            try await store.finish(ref, result: failed, digest: nil)
            #expect(try await current()?.status == .failed)
            #expect(try await current()?.error == FailureReport(message: "the upload was refused", kind: .network))

            for outcome in [ItemOutcome.reused, .skipped] {
                try await store.finish(ref, result: result(ref, outcome), digest: "ignored")
                #expect(try await current()?.status == .failed, "\(outcome) leaves the item as it was")
            }
            try await store.finish(ref, result: result(ref, .interrupted), digest: nil)
            let interrupted = try await current()
            #expect(interrupted?.status == .interrupted && interrupted?.error == nil)
            try await store.finish(ref, result: result(ref, .done), digest: "d")
            let done = try await current()
            #expect(done?.status == .succeeded && done?.digest == "d" && done?.error == nil)

            // The ending of a version the item has moved on from changes nothing.
            let next = try await store.admit(admission(ref.item, new: true, "full:1:two"), workflow: "w")
            try await store.finish(ref, result: result(ref, .failed), digest: nil)
            let moved = try await current()
            #expect(moved?.status == .pending && moved?.version == next.ref.version)
        }
    }

    @Test(arguments: LedgerKind.allCases)
    func aRunsStartCommitsFingerprintsAndWhereItemsAreNow(_ kind: LedgerKind) async throws {
        try await kind.withStore { store in
            let done = try await store.admit(admission(nil, new: false, "full:1:one"), workflow: "w")
            let facts = MediaFacts(duration: 2.5, container: "mov,mp4,m4a,3gp,3g2,mj2", videoCodec: "h264")
            // Paths sort in the byte order of their UTF-8: "Z" < "a" < "é".
            let entries = [
                cacheEntry("/c/a", media: .facts(facts)), cacheEntry("/c/Z", media: .unreadable("moov atom not found")),
                cacheEntry("/c/é"),
            ]
            let moved = InputItem(
                path: "/n/a.mp4", relativePath: "a.mp4", size: 2, modified: 7, meta: ["title": "A", "tags": ["x"]])
            let run = try await store.beginRun(
                RunRecord(workflow: "w", file: "/w.json", stages: ["up"]), caching: entries,
                sightings: [ItemSighting(item: done.ref.item, input: moved)])

            let cached = try await store.cachedFingerprints(pathsFrom: "/c/Z", through: "/c/a")
            #expect(cached == ["/c/Z": entries[1], "/c/a": entries[0]])
            #expect(try await store.cachedFingerprints(pathsFrom: "/c/b", through: "/c/z").isEmpty)
            let found = try await store.items(workflow: "w", pathsFrom: "/n/", through: "/n/z")
            #expect(found.map(\.id) == [done.ref.item])
            #expect(found.first?.input == moved, "the sighting's path, size, time and metadata")

            // A later run's entry replaces the file's, and its record is the workflow's.
            let changed = cacheEntry("/c/a", fingerprint: "full:1:changed")
            let later = try await store.beginRun(
                RunRecord(workflow: "w", file: "/w2.json", stages: ["up", "down"]), caching: [changed], sightings: [])
            #expect(later > run)
            #expect(try await store.cachedFingerprints(pathsFrom: "/c/a", through: "/c/a") == ["/c/a": changed])
            #expect(
                try await store.workflows() == [RunRecord(workflow: "w", file: "/w2.json", stages: ["up", "down"])])
            try await store.cacheFingerprints([entries[2]])
            #expect(try await store.cachedFingerprints(pathsFrom: "/c/é", through: "/c/é") == ["/c/é": entries[2]])
        }
    }

    @Test(arguments: LedgerKind.allCases)
    func cancelRequestsAreAnsweredByACancelOrDropped(_ kind: LedgerKind) async throws {
        try await kind.withStore { store in
            let a = try await store.admit(admission(nil, new: false, "full:1:a"), workflow: "w").ref.item
            let b = try await store.admit(admission(nil, new: false, "full:1:b"), workflow: "w").ref.item
            let c = try await store.admit(admission(nil, new: false, "full:1:c"), workflow: "other").ref.item
            try await store.requestCancel(of: [a, b, c])
            try await store.requestCancel(of: [a])
            #expect(try await store.cancelRequests(workflow: "w") == [a, b])
            try await store.answerCancelRequests(for: [a])
            #expect(try await store.cancelRequests(workflow: "w") == [b])
            #expect(try await store.snapshot(workflow: "w").items.allSatisfy { $0.status == .pending })
            try await store.setStatus(.failed, of: [b])
            #expect(try await store.cancelRequests(workflow: "w") == [b], "only a cancel answers the request")
            try await store.setStatus(.cancelled, of: [b])
            #expect(try await store.cancelRequests(workflow: "w").isEmpty)
            #expect(try await store.cancelRequests(workflow: "other") == [c])
            let statuses = try await store.snapshot(workflow: "w").items.map(\.status)
            #expect(statuses == [.pending, .cancelled])
        }
    }

    @Test(arguments: LedgerKind.allCases)
    func aForgottenItemIsNewToTheNextRun(_ kind: LedgerKind) async throws {
        try await kind.withStore { store in
            let a = try await store.admit(admission(nil, new: false, "full:1:a"), workflow: "w")
            let b = try await store.admit(admission(nil, new: false, "full:1:b"), workflow: "w")
            let c = try await store.admit(admission(nil, new: false, "full:1:c"), workflow: "other")
            try await store.save(record("up", .succeeded, output: "a"), for: a.ref)
            try await store.requestCancel(of: [b.ref.item])

            try await store.forget(items: [a.ref.item])
            #expect(try await store.snapshot(workflow: "w").items.map(\.id) == [b.ref.item])
            #expect(try await store.checkpoints(workflow: "w", items: nil).isEmpty)
            let again = try await store.admit(admission(nil, new: false, "full:1:a"), workflow: "w")
            #expect(again.ref.item != a.ref.item && again.ref.version == 1 && again.stages.isEmpty)

            let forgotten = try await store.forget(workflow: "w")
            #expect(Set(forgotten) == [b.ref.item, again.ref.item])
            #expect(try await store.snapshot(workflow: "w").items.isEmpty)
            #expect(try await store.cancelRequests(workflow: "w").isEmpty)
            #expect(try await store.snapshot(workflow: "other").items.map(\.id) == [c.ref.item])
        }
    }

    /// Fencing applies to PostgreSQL alone (a local run is one process): a command that takes an item up or
    /// cancels it fences out the worker that holds it, and a worker writes nothing for an item it holds no
    /// lease on.
    /// A queued item claimed by a worker: the store of a command, the worker's store and leases, and the item.
    static func itemHeldByAWorker(in database: BatchDatabase) async throws
        -> (command: PostgresStore, worker: PostgresStore, leases: LeaseBook, admitted: AdmittedItem)
    {
        let command = PostgresStore(database: database)
        let admitted = try await command.admit(admission(nil, new: false, "full:1:one"), workflow: "w")
        let queue = BatchQueue(database: database)
        let workflow = try await queue.store(
            SubmittedWorkflow(
                name: "w", file: "/w.json", document: Data("{}".utf8), vars: [:], digest: "d", stages: ["up"]))
        try await queue.enqueue([admitted.ref.item: "d"], with: workflow)
        let claim = try #require(try await queue.claim(for: "worker", lease: .seconds(30)))
        let leases = LeaseBook()
        leases.hold(admitted.ref.item, generation: claim.generation)
        return (command, PostgresStore(database: database, leases: leases), leases, admitted)
    }

    @Test func aCommandFencesOutTheWorkerThatHoldsAnItem() async throws {
        try await LedgerKind.postgres.withDatabase { database in
            let (command, worker, leases, admitted) = try await Self.itemHeldByAWorker(in: database)
            let item = admitted.ref.item
            try await worker.save(record("up", .running), for: admitted.ref)

            let unleased = try await command.admit(admission(nil, new: false, "full:1:two"), workflow: "w")
            await #expect(throws: StateError.self) {
                try await worker.save(record("up", .running), for: unleased.ref)
            }

            _ = try await command.admit(admission(item, new: false, "full:1:one"), workflow: "w")
            await #expect {
                try await worker.save(record("up", .succeeded, output: "late"), for: admitted.ref)
            } throws: { error in
                (error as? StateError)?.code == .leaseLost
            }
            #expect(leases.release(item), "the refused write marks the lease lost")
            let kept = try await command.checkpoints(workflow: "w", items: [item])[item]?["up"]
            #expect(kept?.status == .running, "the fenced-out write changed nothing")
        }
    }

    @Test func aCancelFencesOutTheWorkerThatHoldsAnItem() async throws {
        try await LedgerKind.postgres.withDatabase { database in
            let (command, worker, _, admitted) = try await Self.itemHeldByAWorker(in: database)
            let item = admitted.ref.item

            try await command.setStatus(.cancelled, of: [item])
            await #expect {
                try await worker.finish(admitted.ref, result: result(admitted.ref, .done), digest: "d")
            } throws: { error in
                (error as? StateError)?.code == .leaseLost
            }
            #expect(try await command.snapshot(workflow: "w").items.first?.status == .cancelled)
        }
    }
}

// MARK: - The stores under test

/// A kind of ledger the suite runs against.
enum LedgerKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// Runs `body` with an empty store of this kind, which goes away afterwards.
    func withStore(_ body: (any StateStore) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            let scratch = try Scratch()
            let ledger = try SQLiteLedger(folder: scratch.path("state"))
            defer { try? ledger.close() }
            try await body(ledger)
        case .postgres:
            try await withDatabase { database in try await body(PostgresStore(database: database)) }
        }
    }

    /// Runs `body` with a database of its own on the suite's PostgreSQL server.
    func withDatabase(_ body: (BatchDatabase) async throws -> Void) async throws {
        let server = try await SharedServer.started.value
        let database = try await BatchDatabase(url: try await server.createDatabase())
        do {
            try await body(database)
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }
}

/// One PostgreSQL server for the suite, started by the first test that needs it; each test has a database of its
/// own on it. It stops when the test process ends (``PostgresServer``'s watchdog).
private enum SharedServer {
    static let started = Task { try await PostgresServer.start() }
}

// MARK: - Values

private func admission(_ item: Int64?, new: Bool, _ fingerprint: String) -> ItemAdmission {
    ItemAdmission(
        item: item, newVersion: new, fingerprint: fingerprint,
        input: InputItem(path: "/m/\(fingerprint).mp4", relativePath: "\(fingerprint).mp4", size: 1, modified: 0))
}

private func record(_ stage: String, _ status: StageRecord.Status, output: JSONValue? = nil) -> StageRecord {
    var record = StageRecord(stage: stage, uses: "exec", status: status, optionsHash: "h")
    record.outputs = output
    return record
}

private func result(_ ref: ItemVersion, _ outcome: ItemOutcome) -> ItemResult {
    ItemResult(ref: ref, fingerprint: nil, path: "/m/a.mp4", outcome: outcome)
}

private func cacheEntry(_ path: String, fingerprint: String? = nil, media: MediaProbeResult? = nil)
    -> FingerprintCacheEntry
{
    FingerprintCacheEntry(
        stamp: FileStamp(path: path, size: 10, modifiedNanoseconds: 1_700_000_000_123_456_789, inode: 42, device: 7),
        method: .sampled, fingerprint: fingerprint ?? "sampled:10:\(path)", media: media)
}
