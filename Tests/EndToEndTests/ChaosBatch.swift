import Foundation
import NIOConcurrencyHelpers
import PipelineKit
import Sandbox
import SharedBatch
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A shared batch for the chaos scenarios: small text files submitted to a database of a PostgreSQL server of its
/// own, with three stages that record every side effect. Stages `a` and `b` (exec) append `start` and `end` lines,
/// with their worker's pid, to one log, and `stop` when their worker stops them (SIGTERM); `ticket` (vimeo.ticket) creates a video on a Sandbox, a remote side effect
/// counted by listing the Sandbox's videos. With `failingFirst`, stage `a` fails its first attempt for every item
/// (a `fail` line) and succeeds on its retry.
final class ChaosBatch: @unchecked Sendable {
    static let token = "sandbox-token"
    /// The database's name on the server.
    static let databaseName = "chaos"

    let scratch: Scratch
    let server: PostgresServer
    let url: String
    let sandbox: RunningSandbox
    let items: [String]
    /// The test's own connection, to read the batch's state.
    let database: BatchDatabase
    private let workers = NIOLockedValueBox<[RunningBinary]>([])
    private var log: URL { scratch.path("effects.log") }

    init(items count: Int, stageSeconds: String, failingFirst: Bool = false) async throws {
        scratch = try Scratch()
        server = try await PostgresServer.start()
        url = try await server.createDatabase(Self.databaseName)
        database = try await BatchDatabase(url: url)
        sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        items = (0..<count).map { String(format: "item-%03d.txt", $0) }
        for item in items { try scratch.write("in/\(item)", "content of \(item)\n") }
        try FileManager.default.createDirectory(at: scratch.path("marks"), withIntermediateDirectories: true)
        try scratch.write("chaos.json", workflow(stageSeconds: stageSeconds, failingFirst: failingFirst))
        let submitted = try await Binary.run(
            ["submit", "chaos.json", "--db", url], in: scratch.root, environment: ["CHAOS_TOKEN": Self.token])
        #expect(
            submitted.status == 0 && submitted.stdout.contains("queued \(count) item"),
            "submit: \(submitted.stdout)\(submitted.stderr)")
    }

    /// The workflow: `a`, `ticket`, `b`; every stage retried on a retryable failure.
    private func workflow(stageSeconds: String, failingFirst: Bool) -> String {
        let log = self.log.path
        let marks = scratch.path("marks").path
        let fail =
            failingFirst
            ? "if mkdir \(marks)/${input.name} 2>/dev/null; then echo fail $PPID ${input.name} a >> \(log); exit 1; fi; "
            : ""
        func stage(_ id: String, _ prefix: String) -> String {
            """
            {"id": "\(id)", "uses": "exec", "with": {"retryable": true, "command": ["sh", "-c", "\(prefix)trap 'echo stop $PPID ${input.name} \(id) >> \(log); exit 143' TERM; echo start $PPID ${input.name} \(id) >> \(log); sleep \(stageSeconds); echo end $PPID ${input.name} \(id) >> \(log)"]}}
            """
        }
        return """
            {"version": 1, "name": "chaos", "inputs": {"path": "in"},
             "defaults": {"retry": {"attempts": 10, "initialDelay": "100ms", "maxDelay": "1s"}},
             "stages": [
              \(stage("a", fail)),
              {"id": "ticket", "uses": "vimeo.ticket", "with": {"api": "\(sandbox.baseURL)", "token": "${env.CHAOS_TOKEN}", "name": "${input.stem}", "preflight": false}},
              \(stage("b", ""))
             ]}
            """
    }

    /// Starts a worker (a 3 s lease, so that a dead worker's items are taken over quickly), with `extra`
    /// arguments after the usual ones.
    @discardableResult
    func startWorker(jobs: Int = 1, extra: [String] = []) throws -> RunningBinary {
        let worker = try Binary.start(
            ["worker", "--db", url, "--lease", "3s", "--poll", "50ms", "--jobs", String(jobs)] + extra,
            in: scratch.root, environment: ["CHAOS_TOKEN": Self.token])
        workers.withLockedValue { $0.append(worker) }
        return worker
    }

    /// Kills `worker` with -9 and notes it in the log (a worker holds nothing once it is killed).
    func kill9(_ worker: RunningBinary) async {
        worker.signal(SIGKILL)
        _ = await worker.exit()
        note("KILL \(worker.pid)")
    }

    /// Appends a line of the test's own to the log, after the stages' lines so far.
    func note(_ line: String) { EffectLog(file: log).note(line) }

    /// The log so far, in the order it was written.
    func effects() -> [Effect] { EffectLog(file: log).effects() }

    /// Items whose last stage ended.
    func finished() -> Int {
        Set(effects().filter { $0.kind == "end" && $0.stage == "b" }.map(\.item)).count
    }

    /// The connections the server refused because it had no free one, so far (its log's "too many clients").
    func refusedConnections() -> Int {
        let log = (try? String(contentsOf: server.logFile, encoding: .utf8)) ?? ""
        return log.components(separatedBy: "too many clients").count - 1
    }

    /// Waits until `worker` is in the middle of a stage: it logged a start that no end followed yet.
    func waitUntilMidStage(_ worker: RunningBinary) async throws {
        try await waitUntil("worker \(worker.pid) is in the middle of a stage") {
            var open: Set<String> = []
            for effect in self.effects() where effect.worker == worker.pid {
                let key = effect.item + " " + effect.stage
                if effect.kind == "start" { open.insert(key) } else if effect.kind == "end" { open.remove(key) }
            }
            return !open.isEmpty
        }
    }

    /// Waits until every item of `workflow` succeeded (the counts read through the test's own connection, which
    /// rides out the disruption as the workers do). When they do not, the error tells what the workers did.
    func waitUntilDone(workflow: String = "chaos", count: Int? = nil) async throws {
        try await waitUntilSucceeded(
            count ?? items.count, of: workflow, in: database, limit: .seconds(240),
            workers: { self.workers.withLockedValue { $0 } })
    }

    /// The invariants every scenario ends with: every item succeeded (none failed, queued or running), each stage
    /// of each item ended, stages started again at most `repeats` times in all beyond one start each (the
    /// documented cost: at most the stage each disrupted item was in), no stage of an item run while another ran on
    /// another live worker,
    /// and one video per item on the Sandbox.
    func expectInvariants(repeatsAtMost repeats: Int, _ scenario: String) async throws {
        try await waitUntilDone()
        let status = try await BatchQueue(database: database).status()
        let counts = status.workflows["chaos"]
        #expect(counts?.byStatus["succeeded"] == items.count, "\(scenario): \(String(describing: counts))")
        #expect(counts?.byStatus["failed"] == nil, "\(scenario): failed: \(status.failed.map(\.error))")
        #expect(counts?.queued == 0 && counts?.running == 0, "\(scenario): \(String(describing: counts))")
        let effects = effects()
        for item in items {
            for stage in ["a", "b"] {
                #expect(
                    effects.contains { $0.kind == "end" && $0.item == item && $0.stage == stage },
                    "\(scenario): \(item) \(stage) never ended")
            }
        }
        let starts = effects.filter { $0.kind == "start" }
        let repeated = starts.count - 2 * items.count
        let rerun = Set(starts.map(\.item).filter { item in starts.filter { $0.item == item }.count > 2 })
        #expect(
            repeated >= 0 && repeated <= repeats,
            "\(scenario): \(repeated) stage runs repeated (at most \(repeats)); their lines: \(effects.filter { rerun.contains($0.item) })"
        )
        let overlaps = Self.concurrentRuns(in: effects)
        let involved = Set(overlaps.map(\.2))
        #expect(
            overlaps.isEmpty,
            "\(scenario): held by two live workers at once: \(overlaps); their lines: \(effects.filter { involved.contains($0.item) || $0.kind == "KILL" })"
        )
        let videos = try await sandbox.videos(token: Self.token)
        let names = videos.compactMap { $0["name"]?.stringValue }.sorted()
        #expect(
            names == items.map { String($0.dropLast(4)) }.sorted(),
            "\(scenario): one video per item, not \(videos.count) for \(items.count) items")
        print("\(scenario): \(items.count) items done, \(repeated) stage runs repeated, \(videos.count) videos")
    }

    /// Pairs of (runner, intruder, item): a stage of an item started by one live worker while a stage of the same
    /// item ran on another live worker (started, neither ended nor stopped). A killed worker is no live worker: the
    /// stage process it left runs on by itself, as documented for kill -9.
    static func concurrentRuns(in effects: [Effect]) -> [(Int32, Int32, String)] {
        var running: [String: Set<Int32>] = [:]
        var dead: Set<Int32> = [1]
        var found: [(Int32, Int32, String)] = []
        for effect in effects {
            switch effect.kind {
            case "KILL":
                dead.insert(effect.worker)
            case "start" where !dead.contains(effect.worker):
                for other in running[effect.item, default: []] where other != effect.worker && !dead.contains(other) {
                    found.append((other, effect.worker, effect.item))
                }
                running[effect.item, default: []].insert(effect.worker)
            case "end", "stop":
                running[effect.item]?.remove(effect.worker)
            default:
                break
            }
        }
        return found
    }

    /// Stops the workers still running with SIGTERM; their exit statuses.
    @discardableResult
    func stopAll() async -> [Int32] {
        var statuses: [Int32] = []
        for worker in workers.withLockedValue({ $0 }) where worker.isRunning {
            worker.signal(SIGTERM)
            statuses.append(await worker.exit())
        }
        workers.withLockedValue { $0 = [] }
        await database.close()
        await sandbox.stop()
        try? await server.stop()
        return statuses
    }

    /// For `defer`: kills the workers still running, without waiting.
    func killAll() {
        for worker in workers.withLockedValue({ $0 }) where worker.isRunning { worker.signal(SIGKILL) }
    }
}
