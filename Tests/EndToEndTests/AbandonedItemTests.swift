import Foundation
import PipelineKit
import SharedBatch
import StageKit
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An item that kills its workers, on real `pipeline worker` processes sharing a real PostgreSQL: its stage sends
/// SIGKILL to the worker running it (`kill -9 $PPID` from the stage's shell). The takeover limit fails it as
/// `abandoned` while the other items finish; a healthy item held beside it by a worker with two jobs is not
/// charged that death; a stage that runs again on every takeover (a secret) does not hide it; and a database
/// restart longer than the workers' patience is no takeover to count. Dead workers are started again, as a
/// service manager would; no assertion depends on how many deaths lease timing allows.
@Suite struct AbandonedItemTests {
    static let arguments = ["--lease", "2s", "--poll", "50ms"]

    /// Workers with one job each and `--abandon-after 2`: the poison item is failed as abandoned after its workers
    /// died; the healthy items are done. A secret stage before the killing one runs again on every takeover and
    /// is done each time: no progress. `status --failed` lists the item with its kind, and `submit --failed` queues
    /// it again with its count started again.
    @Test func aPoisonItemIsAbandonedWhileTheOthersFinish() async throws {
        let batch = try await PoisonBatch(items: ["a.txt", "b.txt", "c.txt", "poison.txt"], secret: true, gated: false)
        defer { batch.killAll() }
        // Until every item ended, or the poison item killed three times the limit's workers (then it was not
        // abandoned, and the expectations below say so).
        try await batch.supervise(workers: 2, extra: ["--jobs", "1", "--abandon-after", "2"]) { status in
            status.ended == 4 || batch.deaths() >= 6
        }
        let deaths = batch.deaths()
        let failed = try await batch.failed()
        #expect(failed.map(\.input.relativePath) == ["poison.txt"])
        #expect(try await batch.counts()["succeeded"] == 3)
        #expect(failed.first?.error?.kind == .abandoned, "\(failed.map(\.error))")
        #expect(deaths >= 2, "the poison item was abandoned after \(deaths) death(s), fewer than the limit")
        let secrets = batch.effects().filter { $0.hasPrefix("secret poison.txt") }.count
        #expect(secrets >= 2, "the secret stage ran \(secrets) time(s): no takeover reran it")
        await batch.stopWorkers()

        let listed = try await Binary.run(["status", "--db", batch.url, "--failed"], in: batch.scratch.root)
        #expect(listed.stdout.contains("poison.txt") && listed.stdout.contains("abandoned"), "\(listed.stdout)")
        let retried = try await Binary.run(
            ["submit", "wf.json", "--db", batch.url, "--failed"], in: batch.scratch.root)
        #expect(retried.status == 0 && retried.stdout.contains("queued 1 item"), "\(retried.stdout)\(retried.stderr)")
        #expect(try await batch.takeovers("poison.txt") == 0, "queueing again kept the takeover count")
        await batch.close()
    }

    /// One worker with two jobs holds a healthy item and the poison item when the poison item kills it: neither
    /// takeover counts. Each is then run by a worker that runs nothing else; the poison item's next deaths are its
    /// own, and with `--abandon-after 1` it is abandoned while the healthy item is done.
    @Test func aHealthyItemBesidePoisonWithTwoJobsIsNotAbandoned() async throws {
        let batch = try await PoisonBatch(items: ["healthy.txt", "poison.txt"], secret: false, gated: true)
        defer { batch.killAll() }
        let first = try batch.startWorker(extra: ["--jobs", "2", "--abandon-after", "1"])
        try await waitUntil("the first worker died holding both items") {
            !PoisonBatch.alive(first) && batch.effects().contains { $0.hasPrefix("start healthy.txt") }
        }
        try batch.scratch.write("go", "")
        try await batch.supervise(workers: 2, extra: ["--jobs", "2", "--abandon-after", "1"]) { status in
            status.ended == 2 || batch.deaths() >= 6
        }
        let failed = try await batch.failed()
        #expect(failed.map(\.input.relativePath) == ["poison.txt"], "\(failed.map(\.error))")
        #expect(failed.first?.error?.kind == .abandoned)
        #expect(try await batch.counts()["succeeded"] == 1, "the healthy item did not finish")
        await batch.stopWorkers()
        await batch.close()
    }

    /// A worker with one job is killed (not by its item) while a worker with two jobs is busy with a long item:
    /// the busy worker takes the dead worker's item over at once, beside its long item, without waiting to run
    /// nothing else (crash recovery waits for no idle worker). The gate stays shut until then, so the long item
    /// still runs when the takeover happens.
    @Test func aBusyWorkerTakesOverADeadWorkersItem() async throws {
        let batch = try await PoisonBatch(items: ["a.txt", "b.txt"], secret: false, gated: true)
        defer { batch.killAll() }
        let lone = try batch.startWorker(extra: ["--jobs", "1"])
        try await waitUntil("the lone worker started an item") {
            batch.effects().contains { $0.hasPrefix("start ") && $0.hasSuffix(" \(lone.pid)") }
        }
        let busy = try batch.startWorker(extra: ["--jobs", "2"])
        try await waitUntil("the busy worker started the other item") {
            batch.effects().contains { $0.hasPrefix("start ") && $0.hasSuffix(" \(busy.pid)") }
        }
        lone.signal(SIGKILL)
        try await waitUntil(
            "the busy worker took the dead worker's item over, beside its long item", limit: .seconds(30)
        ) {
            batch.effects().filter { $0.hasPrefix("start ") && $0.hasSuffix(" \(busy.pid)") }.count == 2
        }
        #expect(!batch.effects().contains { $0.hasPrefix("end ") }, "the long item ended before the takeover")
        #expect(busy.stdout.soFar.contains("taking over from worker"))
        try batch.scratch.write("go", "")
        try await waitUntil("both items ended") { (try? await batch.counts())?["succeeded"] == 2 }
        await batch.stopWorkers()
        await batch.close()
    }

    /// PostgreSQL stopped until every worker let its item go (its lease about to run out), then started again:
    /// the items are taken over, and with `--abandon-after 1` none is abandoned: an outage is not a crash.
    @Test func aDatabaseRestartIsNotATakeover() async throws {
        let batch = try await PoisonBatch(items: ["a.txt", "b.txt"], secret: false, gated: true)
        defer { batch.killAll() }
        let workers = try (0..<2).map { _ in try batch.startWorker(extra: ["--jobs", "1", "--abandon-after", "1"]) }
        try await waitUntil("both items started") {
            batch.effects().filter { $0.hasPrefix("start ") }.count >= 2
        }
        try await batch.server.stop()
        try await waitUntil("both workers let their items go") {
            workers.allSatisfy { $0.stdout.soFar.contains("stopping 1 item(s) before their leases run out") }
        }
        try await batch.server.restart()
        try batch.scratch.write("go", "")
        try await waitUntil("both items ended", limit: .seconds(180)) {
            (try? await batch.counts())?.ended == 2
        }
        #expect(
            workers.contains { $0.stdout.soFar.contains("taking over from worker") },
            "no item was taken over: the test did not reach its case")
        let failed = try await batch.failed()
        #expect(failed.isEmpty, "\(failed.map(\.error))")
        await batch.stopWorkers()
        await batch.close()
    }

    /// A shared segmented encode with two workers and `--abandon-after 1`: the worker that does not hold the item
    /// is killed while it encodes a unit (as a unit that crashes its encoder would kill it). That unit's takeover
    /// reaches the limit: it is given up, and the item fails as abandoned, not with the 5-attempt limit's message.
    @Test func aUnitWhoseWorkerDiesFailsItsItemAsAbandoned() async throws {
        let scratch = try Scratch()
        let farm = try await SegmentFarmTests.Farm(in: scratch.root)
        let database = try await BatchDatabase(url: farm.url)
        let limit = ["--abandon-after", "1"]
        var workers = [
            try farm.startWorker(0, extra: limit), try farm.startWorker(1, extra: limit),
        ]
        defer { workers.forEach { $0.signal(SIGKILL) } }
        var index = 2
        // Until a kill lands while the worker holds a unit (it may finish one between the look and the kill).
        while true {
            let victim = Mutex<(pid: Int32, id: String)?>(nil)
            try await waitUntil("a worker that does not hold the item encodes a unit", limit: .seconds(300)) {
                let status = try await BatchQueue(database: database).status()
                let idle = Set(status.workers.filter { $0.holding == 0 && $0.stoppedAt == nil }.map(\.id))
                let encoding = status.splits.flatMap(\.encoding).first { idle.contains($0.worker) }
                guard let encoding, let pid = Int32(encoding.worker.split(separator: ":").dropFirst().first ?? "")
                else { return false }
                victim.withLock { $0 = (pid, encoding.worker) }
                return true
            }
            let (pid, id) = try #require(victim.withLock { $0 })
            kill(pid, SIGKILL)
            let held = try await SegmentQueue(database: database).splits().flatMap(\.encoding).contains {
                $0.worker == id
            }
            if held { break }
            workers.append(try farm.startWorker(index, extra: limit))
            index += 1
        }
        try await waitUntil("the item ended", limit: .seconds(300)) {
            let counts = try? await BatchQueue(database: database).status().workflows["farm"]?.byStatus
            return counts?["failed"] == 1 || counts?["succeeded"] == 1
        }
        let failed = try await BatchQueue(database: database).status().failed
        #expect(failed.first?.error?.kind == .abandoned, "\(failed.map(\.error))")
        #expect(failed.first?.error?.message.contains("was abandoned") == true, "\(failed.map(\.error))")
        await database.close()
        try await farm.server.stop()
    }
}

/// A batch of small text files whose `work` stage waits for a file `go` (items other than `poison.txt`; made at
/// once unless `gated`) or kills the worker running it (`poison.txt`, once `healthy.txt`'s stage has started when
/// that item exists). With `secret`, a secret stage runs before it. Every stage logs what it did, one line each, to `effects.log`.
final class PoisonBatch: @unchecked Sendable {
    let scratch: Scratch
    let server: PostgresServer
    let url: String
    let database: BatchDatabase
    private let workers = Mutex<[RunningBinary]>([])

    init(items: [String], secret: Bool, gated: Bool) async throws {
        scratch = try Scratch()
        server = try await PostgresServer.start()
        url = try await server.createDatabase()
        database = try await BatchDatabase(url: url)
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        for item in items { try scratch.write("in/\(item)", "content of \(item)\n") }
        let log = scratch.path("effects.log").path
        let go = scratch.path("go").path
        let healthy =
            items.contains("healthy.txt") ? "while ! grep -q '^start healthy.txt' \(log); do sleep 0.02; done; " : ""
        let work = """
            echo start ${input.name} $PPID >> \(log); \
            if [ ${input.name} = poison.txt ]; then \(healthy)echo kill ${input.name} $PPID >> \(log); kill -9 $PPID; exit 1; fi; \
            while [ ! -e \(go) ]; do sleep 0.02; done; echo end ${input.name} $PPID >> \(log)
            """
        let secretStage = """
            {"id": "token", "uses": "exec", "secret": true, "with": {"command": ["sh", "-c", "echo secret ${input.name} $PPID >> \(log)"]}},
            """
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "poison", "inputs": {"path": "in"}, "stages": [
              \(secret ? secretStage : "")
              {"id": "work", "uses": "exec", "with": {"command": ["sh", "-c", "\(work)"]}}
            ]}
            """)
        if !gated { try scratch.write("go", "") }
        let submitted = try await Binary.run(["submit", "wf.json", "--db", url], in: scratch.root)
        #expect(submitted.status == 0, "submit: \(submitted.stdout)\(submitted.stderr)")
    }

    /// Starts a worker on the batch.
    func startWorker(extra: [String]) throws -> RunningBinary {
        let worker = try Binary.start(["worker", "--db", url] + AbandonedItemTests.arguments + extra, in: scratch.root)
        workers.withLock { $0.append(worker) }
        return worker
    }

    /// Keeps `count` workers running (starting one again for each that died) until `done` holds for the
    /// workflow's counts.
    func supervise(workers count: Int, extra: [String], until done: @escaping @Sendable ([String: Int]) -> Bool)
        async throws
    {
        try await waitUntil("the batch ended as expected", limit: .seconds(240)) {
            let running = self.workers.withLock { $0.filter(Self.alive).count }
            for _ in running..<max(running, count) { _ = try self.startWorker(extra: extra) }
            guard let counts = try? await self.counts() else { return false }
            return done(counts)
        }
    }

    /// Whether `worker` runs: not gone, nor a zombie. (Foundation's `isRunning` may miss a child's end: see
    /// `waitForExit(of:)`.)
    static func alive(_ worker: RunningBinary) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(worker.pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }

    /// The workflow's counts.
    func counts() async throws -> [String: Int] {
        try await BatchQueue(database: database).status().workflows["poison"]?.byStatus ?? [:]
    }

    /// The failed items.
    func failed() async throws -> [LedgerItem] {
        try await BatchQueue(database: database).status().failed
    }

    /// The takeovers counted against an item now (-1 when there is no such item).
    func takeovers(_ name: String) async throws -> Int {
        let database = String(url.split(separator: "/").last ?? "")
        let count = try await server.psql(
            "SELECT takeovers FROM items WHERE relative_path = '\(name)'", database: database)
        return Int(count) ?? -1
    }

    /// The lines the stages logged.
    func effects() -> [String] {
        scratch.read("effects.log").split(separator: "\n").map(String.init)
    }

    /// Workers the poison item killed.
    func deaths() -> Int {
        effects().filter { $0.hasPrefix("kill ") }.count
    }

    /// Stops the workers still running.
    func stopWorkers() async {
        for worker in workers.withLock({ $0 }) {
            if Self.alive(worker) { worker.signal(SIGTERM) }
            _ = await worker.exit()
        }
    }

    /// Closes the test's connection and stops the server.
    func close() async {
        await database.close()
        try? await server.stop()
    }

    /// For `defer`: kills the workers still running, without waiting, and opens the gate, so that no stage's
    /// shell waits on after the test.
    func killAll() {
        for worker in workers.withLock({ $0 }) where Self.alive(worker) { worker.signal(SIGKILL) }
        try? scratch.write("go", "")
    }
}

extension [String: Int] {
    /// Items that ended, done or failed.
    var ended: Int { (self["succeeded"] ?? 0) + (self["failed"] ?? 0) }
}
