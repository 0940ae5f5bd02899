import Foundation
import PipelineKit
import SharedBatch
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Workers sharing a batch through a real PostgreSQL server (started by the test, as a non-root user): kill -9,
/// a worker stalled past its lease, a database restart, and an encode and upload taken over by another worker.
@Suite(.serialized) struct WorkerTests {
    /// Every test's workers: a 3 s lease, so that a dead worker's items are taken over quickly.
    static let workerArguments = ["--lease", "3s", "--poll", "50ms", "--jobs", "1"]

    /// Three workers over 200 items, kill -9 at five seeded moments (each killed worker is started again):
    /// every item's stages are done, the stages run again at most once per kill, and no item is ever held by two
    /// live workers at once.
    @Test func threeWorkersSurviveFiveKills() async throws {
        let random = SeededRandom("threeWorkersSurviveFiveKills")
        let batch = try await SharedBatch(items: 200, stageSeconds: "0.03")
        defer { batch.killAll() }
        var workers = try (0..<3).map { _ in try batch.startWorker() }
        for kill in 1...5 {
            // Spread over the batch: after about 30, 60, … 150 items' last stage, give or take ten.
            let target = kill * 30 + random.int(in: -10...10)
            try await waitUntil("\(target) items finished their last stage") {
                batch.effects().filter { $0.kind == "end" && $0.stage == "b" }.count >= target
            }
            let victim = random.int(in: 0...(workers.count - 1))
            workers[victim].signal(SIGKILL)
            _ = await workers[victim].exit()
            batch.note("KILL \(workers[victim].pid)")
            workers[victim] = try batch.startWorker()
        }
        try await batch.waitUntilDone(200)
        let status = try await batch.status()
        #expect(status.workflows["shared"]?.byStatus["succeeded"] == 200)
        #expect(status.workflows["shared"]?.queued == 0 && status.workflows["shared"]?.running == 0)
        let exits = await batch.stopAll()
        #expect(exits.allSatisfy { $0 == 0 }, "workers stopped by SIGTERM exit with 0: \(exits)")

        let effects = batch.effects()
        for item in batch.items {
            for stage in ["a", "b"] {
                #expect(
                    effects.contains { $0.kind == "end" && $0.item == item && $0.stage == stage },
                    "\(item) \(stage) never finished")
            }
        }
        let repeats = effects.filter { $0.kind == "start" }.count - 2 * batch.items.count
        #expect(repeats <= 5, "\(repeats) stage runs repeated for 5 kills")
        let overlaps = Self.overlaps(in: effects)
        #expect(
            overlaps.isEmpty,
            "held by two live workers at once: \(overlaps); their lines: \(effects.filter { effect in overlaps.contains { $0.2 == effect.item } || effect.kind == "KILL" })"
        )
        print("threeWorkersSurviveFiveKills: \(repeats) repeated stage runs for 5 kills")
    }

    /// A worker stopped with SIGSTOP past its lease, then continued: another worker has taken the item over, the
    /// stopped one's next write is refused and it drops the item, which is finished once, by the other.
    @Test func aStalledWorkerIsFencedOff() async throws {
        let batch = try await SharedBatch(items: 1, stageSeconds: nil)
        defer { batch.killAll() }
        let first = try batch.startWorker()
        try await waitUntil("the first worker started stage a") {
            batch.effects().contains { $0.kind == "start" && $0.worker == first.pid }
        }
        first.signal(SIGSTOP)
        let second = try batch.startWorker()
        try await waitUntil("the second worker took the item over") {
            batch.effects().contains { $0.kind == "start" && $0.worker == second.pid }
        }
        // Both stage processes may finish now; the first worker learns its fate once it runs again.
        try batch.release()
        try await waitUntil("both stage processes finished") {
            batch.effects().filter { $0.kind == "end" && $0.stage == "a" }.count == 2
        }
        first.signal(SIGCONT)
        try await batch.waitUntilDone(1)
        try await waitUntil("the first worker dropped the item") {
            first.stdout.soFar.contains("another worker took this item over")
        }
        _ = await batch.stopAll()
        let finals = batch.effects().filter { $0.stage == "b" && $0.kind == "start" }
        #expect(finals.map(\.worker) == [second.pid], "stage b ran once, on the second worker: \(finals)")
        #expect(
            !first.stdout.soFar.contains("✗"), "the fenced-off worker reported the item failed: \(first.stdout.soFar)")
    }

    /// PostgreSQL restarted in the middle of a batch: the workers reconnect with backoff and finish it.
    @Test func workersRideOutADatabaseRestart() async throws {
        let batch = try await SharedBatch(items: 60, stageSeconds: "0.02")
        defer { batch.killAll() }
        for _ in 0..<2 { _ = try batch.startWorker() }
        try await waitUntil("15 items finished") {
            batch.effects().filter { $0.kind == "end" && $0.stage == "b" }.count >= 15
        }
        try await batch.server.restart()
        try await batch.waitUntilDone(60)
        let status = try await batch.status()
        #expect(status.workflows["shared"]?.byStatus["failed"] == nil, "\(status.failed.map(\.error))")
        #expect(status.workflows["shared"]?.byStatus["succeeded"] == 60)
    }

    /// `pipeline cancel --db` of two items: the worker running one stops it and runs its onCancel stage; the
    /// queued one is undone by the command. Neither reaches its last stage, and both end cancelled.
    @Test func cancelReachesTheWorkerAndTheQueue() async throws {
        let batch = try await SharedBatch(items: 2, stageSeconds: nil, undoable: true)
        defer { batch.killAll() }
        let worker = try batch.startWorker()
        try await waitUntil("the worker started the first item") {
            batch.effects().contains { $0.kind == "start" && $0.worker == worker.pid }
        }
        let cancel = try await Binary.run(
            ["cancel", "wf.json", "item-000.txt", "item-001.txt", "--db", batch.url], in: batch.scratch.root)
        #expect(cancel.status == 0, "\(cancel.stdout)\(cancel.stderr)")
        let undone = batch.effects().filter { $0.kind == "undo" }
        #expect(Set(undone.map(\.item)) == ["item-000.txt", "item-001.txt"], "\(undone)")
        #expect(undone.first { $0.item == "item-000.txt" }?.worker == worker.pid, "the worker undid its own item")
        #expect(!batch.effects().contains { $0.stage == "b" })
        let status = try await batch.status()
        #expect(status.workflows["shared"]?.byStatus["cancelled"] == 2)
        #expect(status.workflows["shared"]?.queued == 0 && status.workflows["shared"]?.running == 0)
        _ = await batch.stopAll()
    }

    /// Pairs of (holder, intruder): an item's stage started by one worker while another live worker held it
    /// (from its first stage's start to its last stage's end). A worker holds nothing once it is killed. A stage
    /// process whose worker was killed as it started it runs on, reparented to init (its lines say worker 1):
    /// it is no live worker either.
    static func overlaps(in effects: [Effect]) -> [(Int32, Int32, String)] {
        var holders: [String: Int32] = [:]
        var dead: Set<Int32> = [1]
        var found: [(Int32, Int32, String)] = []
        for effect in effects {
            switch effect.kind {
            case "KILL":
                dead.insert(effect.worker)
            case "start" where !dead.contains(effect.worker):
                if let holder = holders[effect.item], holder != effect.worker, !dead.contains(holder) {
                    found.append((holder, effect.worker, effect.item))
                }
                holders[effect.item] = effect.worker
            case "end" where effect.stage == "b" && holders[effect.item] == effect.worker:
                holders[effect.item] = nil
            default:
                break
            }
        }
        return found
    }
}

/// A batch of small text files submitted to a fresh database, whose two stages (`a`, `b`) log their side
/// effects to one file, each line appended whole. With `stageSeconds` nil, stage `a` waits until the test
/// calls ``release()``.
final class SharedBatch: @unchecked Sendable {
    let scratch: Scratch
    let server: PostgresServer
    let url: String
    let items: [String]
    /// The test's own connection, to read the batch's state.
    let database: BatchDatabase
    private var workers: [RunningBinary] = []
    private var log: URL { scratch.path("effects.log") }

    init(items count: Int, stageSeconds: String?, undoable: Bool = false) async throws {
        scratch = try Scratch()
        server = try await PostgresServer.start()
        url = try await server.createDatabase()
        database = try await BatchDatabase(url: url)
        let folder = scratch.path("in")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        items = (0..<count).map { String(format: "item-%03d.txt", $0) }
        for item in items { try scratch.write("in/\(item)", "content of \(item)\n") }
        let log = scratch.path("effects.log").path
        let gate = scratch.path("go").path
        let wait = stageSeconds.map { "sleep \($0)" } ?? "while [ ! -e \(gate) ]; do sleep 0.02; done"
        func stage(_ id: String, _ wait: String) -> String {
            """
            {"id": "\(id)", "uses": "exec", "with": {"command": ["sh", "-c", "echo start $PPID ${input.name} \(id) >> \(log); \(wait); echo end $PPID ${input.name} \(id) >> \(log)"]}}
            """
        }
        let onCancel =
            undoable
            ? """
            , "onCancel": [{"id": "undo", "uses": "exec", "with": {"command": ["sh", "-c", "echo undo $PPID ${input.name} undo >> \(log)"]}}]
            """ : ""
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "shared", "inputs": {"path": "in"}, "stages": [
              \(stage("a", wait)), \(stage("b", stageSeconds.map { "sleep \($0)" } ?? "true"))
            ]\(onCancel)}
            """)
        let submitted = try await Binary.run(["submit", "wf.json", "--db", url], in: scratch.root)
        #expect(
            submitted.status == 0 && submitted.stdout.contains("queued \(count) item"),
            "submit: \(submitted.stdout)\(submitted.stderr)")
    }

    /// Starts a worker on the batch's database, with `extra` arguments after the tests' usual ones.
    func startWorker(extra: [String] = []) throws -> RunningBinary {
        let worker = try Binary.start(
            ["worker", "--db", url] + WorkerTests.workerArguments + extra, in: scratch.root)
        workers.append(worker)
        return worker
    }

    /// Lets stage `a` finish (when it waits for the test).
    func release() throws {
        try scratch.write("go", "")
    }

    /// Appends a line of the test's own to the log, after the stages' lines so far.
    func note(_ line: String) { EffectLog(file: log).note(line) }

    /// The log so far, in the order it was written.
    func effects() -> [Effect] { EffectLog(file: log).effects() }

    /// The batch's state in the database.
    func status() async throws -> BatchStatus {
        try await BatchQueue(database: database).status()
    }

    /// Waits until `count` items succeeded. If they do not, the error tells what the batch and the workers
    /// were doing.
    func waitUntilDone(_ count: Int) async throws {
        try await waitUntilSucceeded(
            count, of: "shared", in: database, limit: .seconds(300), workers: { self.workers },
            context: { "; \(self.effects().count) effects logged" })
    }

    /// Stops the workers still running with SIGTERM (continuing stopped ones first); their exit statuses.
    @discardableResult
    func stopAll() async -> [Int32] {
        var statuses: [Int32] = []
        for worker in workers where worker.isRunning {
            worker.signal(SIGCONT)
            worker.signal(SIGTERM)
            statuses.append(await worker.exit())
        }
        workers = []
        await database.close()
        try? await server.stop()
        return statuses
    }

    /// For `defer`: kills the workers still running, without waiting.
    func killAll() {
        for worker in workers where worker.isRunning { worker.signal(SIGKILL) }
    }
}

extension WorkerTests {
    /// `ffmpeg.transcode` then `tus.upload` (to tuspyserver) across two workers. The worker uploading the first
    /// video is killed with -9 and its encode deleted, as on a machine the next worker cannot see: the worker that
    /// takes the item over encodes it again, finds the same bytes, and resumes the same upload. Each video is
    /// uploaded once, whole, and the bytes sent twice stay within one chunk.
    @Test func encodeAndUploadAcrossTwoWorkers() async throws {
        let scratch = try Scratch()
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        let tus = try await PeerServer(script: "tus_server.py")
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        for (index, pattern) in ["testsrc2", "smptebars"].enumerated() {
            let made = await runTool(
                "/usr/bin/ffmpeg",
                [
                    "-v", "error", "-f", "lavfi", "-i", "\(pattern)=size=640x360:rate=25:duration=6", "-f", "lavfi",
                    "-i", "sine=frequency=\(440 + index * 220):duration=6", "-c:v", "libx264", "-preset", "ultrafast",
                    "-c:a", "aac", "-shortest", scratch.path("in/clip\(index).mp4").path,
                ])
            #expect(made.status == 0, "\(made.stderr)")
        }
        let chunk = 128 << 10
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "encode-upload", "inputs": {"path": "in"}, "stages": [
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"video": {"preset": "veryfast", "crf": 20}}},
              {"id": "upload", "uses": "tus.upload", "with": {"endpoint": "http://127.0.0.1:\(tus.port)/files/", "file": "${export.path}", "chunkSize": "128KiB"}}
            ]}
            """)
        let submitted = try await Binary.run(["submit", "wf.json", "--db", url], in: scratch.root)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        let artifacts = scratch.path("artifacts").path
        let arguments =
            ["worker", "--db", url, "--artifacts", artifacts, "--bwlimit", "400KiB"] + Self.workerArguments
        let stats = "http://127.0.0.1:\(tus.port)/stats"
        let first = try Binary.start(arguments, in: scratch.root)
        try await waitUntil("the first worker uploaded 300 kB") {
            guard first.isRunning else { return true }
            return (try? await UploadKillTests.received(stats)) ?? 0 >= 300_000
        }
        #expect(first.isRunning, "the first worker stopped before it could be killed")
        first.signal(SIGKILL)
        _ = await first.exit()
        try FileManager.default.removeItem(atPath: artifacts)

        let workers = try (0..<2).map { _ in try Binary.start(arguments, in: scratch.root) }
        let database = try await BatchDatabase(url: url)
        try await waitUntil("both videos are uploaded", limit: .seconds(300)) {
            let status = try? await BatchQueue(database: database).status()
            return status?.workflows["encode-upload"]?.byStatus["succeeded"] == 2
        }
        await database.close()
        for worker in workers {
            worker.signal(SIGTERM)
            #expect(await worker.exit() == 0)
        }
        let log = await workers[0].stdout.text() + workers[1].stdout.text()
        #expect(log.contains("is missing: running it again"), "the takeover encodes the missing file again: \(log)")

        let stored = try FileManager.default.contentsOfDirectory(atPath: tus.folder.path).filter { $0.count == 32 }
        #expect(stored.count == 2, "one upload per video, not one per worker: \(stored)")
        let encodes = try FileManager.default.subpathsOfDirectory(atPath: artifacts).filter { $0.hasSuffix(".mp4") }
        let expected = Set(await encodes.asyncMap { await sha256sum("\(artifacts)/\($0)") })
        let uploaded = Set(await stored.asyncMap { await sha256sum(tus.folder.appendingPathComponent($0).path) })
        #expect(expected.count == 2 && uploaded == expected, "the uploads are the encodes, whole")
        let total = try encodes.reduce(0) { sum, path in
            sum + ((try FileManager.default.attributesOfItem(atPath: "\(artifacts)/\(path)")[.size] as? Int) ?? 0)
        }
        let resent = try await UploadKillTests.received(stats) - total
        #expect(resent >= 0 && resent <= chunk, "\(resent) bytes sent twice for one kill (chunk \(chunk))")
        try await server.stop()
    }
}

extension Sequence {
    /// The results of `transform` on each element, in order.
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
