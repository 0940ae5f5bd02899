import Foundation
import Logging
import NIOConcurrencyHelpers
import PipelineKit
import StageKit
import Testing

/// A stage for tests: counts its runs per key, can fail a number of times, sleep, and checkpoint.
struct ProbeStage: Stage {
    struct Options: StageOptions {
        @Option("Counter name.") var key: String
        @Option("Fail this many times first.") var failTimes = 0
        @Option("Fail fatally rather than retryably.") var fatal = false
        @Option("Seconds to sleep after checkpointing.") var sleep = 0.0
        @Option("Returned as the value output.") var value: JSONValue = .null
    }

    struct Outputs: StageOutputs {
        @Output("The value option.") var value = JSONValue.null
        @Output("How many times it ran.") var run = 0
        @Output("The resume data it got.") var resumed: JSONValue? = nil
    }

    static let stageType = "test.probe"
    static let summary = "Counts its runs (tests only)."

    static let counts = NIOLockedValueBox<[String: Int]>([:])

    static func runs(_ key: String) -> Int {
        counts.withLockedValue { $0[key, default: 0] }
    }

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let run = Self.counts.withLockedValue { counts in
            counts[options.key, default: 0] += 1
            return counts[options.key, default: 0]
        }
        if run <= options.failTimes {
            throw options.fatal
                ? StageFailure("boom \(run)", kind: .invalidInput)
                : StageFailure.retryable("flaky \(run)", kind: .network)
        }
        let resumed = context.lastCheckpoint(as: JSONValue.self)
        try await context.checkpoint(["step": JSONValue.int(run)])
        if options.sleep > 0 { try await Task.sleep(for: .milliseconds(Int(options.sleep * 1000))) }
        return Outputs(value: options.value, run: run, resumed: resumed)
    }
}

/// Collects a run's events.
final class EventLog: RunEventSink {
    let events = NIOLockedValueBox<[any RunEvent]>([])
    /// Called with each event once it is logged.
    private let onEvent: @Sendable (any RunEvent) -> Void

    init(onEvent: @escaping @Sendable (any RunEvent) -> Void = { _ in }) {
        self.onEvent = onEvent
    }

    func emit(_ event: any RunEvent) {
        events.withLockedValue { $0.append(event) }
        onEvent(event)
    }

    /// The events of one kind, in order.
    func all<Event: RunEvent>(_ kind: Event.Type) -> [Event] {
        events.withLockedValue { $0.compactMap { $0 as? Event } }
    }

    /// (item, stage, outcome) of every finished stage.
    var finished: [(String, String, StageOutcome)] {
        all(StageFinished.self).map { ($0.item, $0.stage, $0.outcome) }
    }

    func outcomes(_ stage: String) -> [StageOutcome] {
        finished.filter { $0.1 == stage }.map(\.2)
    }

    var itemErrors: [String] {
        all(ItemFinished.self).compactMap {
            $0.error?.message ?? ($0.outcome == .interrupted ? "interrupted" : nil)
        }
    }
}

/// A temporary folder with a state folder and input files, removed at the end.
struct Sandbox: ~Copyable {
    let root: URL

    init(files: Int = 1) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("pk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("in"), withIntermediateDirectories: true)
        for index in 0..<files {
            try Data("item \(index)\n".utf8).write(to: root.appendingPathComponent("in/file\(index).txt"))
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: root)
    }

    var state: URL { root.appendingPathComponent("state") }

    /// The absolute path of `in/file<index>.txt`.
    func path(file index: Int) -> String {
        root.appendingPathComponent("in/file\(index).txt").standardizedFileURL.path
    }

    /// The ledger of the state folder, opened to write (for a run, or to plant a checkpoint).
    func ledger() throws -> SQLiteLedger {
        try SQLiteLedger(folder: state)
    }

    /// The ledger opened read-only on a thread of its own, so that polling it never holds up a cooperative
    /// thread or the writer.
    private func reader() async throws -> SQLiteLedger? {
        let state = self.state
        guard SQLiteLedger.exists(in: state) else { return nil }
        do {
            return try await BlockingWork.run { try SQLiteLedger(readingOnly: state) }
        } catch let error as StateError where error.code == .busy {
            return nil
        }
    }

    /// The ledger's item for `in/file<index>.txt` (workflow `t`); nil until a run has created the ledger.
    func item(file index: Int = 0) async throws -> LedgerItem? {
        guard let reader = try await reader() else { return nil }
        let path = path(file: index)
        return try await reader.snapshot(workflow: "t").items.first { $0.input.path == path }
    }

    /// The checkpoint of a stage of `in/file<index>.txt`'s current version (workflow `t`).
    func checkpoint(_ stage: String, file index: Int = 0) async throws -> StageRecord? {
        guard let item = try await item(file: index), let reader = try await reader() else { return nil }
        return try await reader.checkpoints(workflow: "t", items: [item.id])[item.id]?[stage]
    }

    /// Every byte under the state folder, file by file, to search for what must never be stored.
    func stateBytes() throws -> [(String, Data)] {
        try FileManager.default.subpathsOfDirectory(atPath: state.path).compactMap { name in
            let url = state.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { return nil }
            return (name, try Data(contentsOf: url))
        }
    }

    static var registry: StageRegistry {
        var registry = StageRegistry()
        do {
            try registry.register(ProbeStage.self)
            try registry.register(TokenStage.self)
            try registry.register(GuardedStage.self)
            try registry.register(CPUStage.self)
            try registry.register(TransferStage.self)
            try registry.register(SelfRetryingStage.self)
            try registry.register(FileMakerStage.self)
        } catch {
            Issue.record("the test stages' names collide: \(error)")
        }
        return registry
    }

    func workflow(_ json: String, registry: StageRegistry = Self.registry) throws -> Workflow {
        try WorkflowLoader(registry: registry).load(data: Data(json.utf8), file: "test.json")
    }

    @discardableResult
    func run(
        _ json: String, environment: [String: String] = [:], jobs: Int = 1, limits: ResourceLimits = ResourceLimits(),
        log: EventLog = EventLog(), registry: StageRegistry = Self.registry
    ) async throws -> RunSummary {
        try await outcome(json, environment: environment, jobs: jobs, limits: limits, log: log, registry: registry)
            .summary
    }

    /// Runs a workflow over the sandbox's files as the command line does, and returns what the runner returns.
    /// `slots`, when given, are shared with other runners (as a worker's are) and stand for `limits`.
    func outcome(
        _ json: String, environment: [String: String] = [:], jobs: Int = 1, limits: ResourceLimits = ResourceLimits(),
        slots: ResourceSlots? = nil, log: EventLog = EventLog(), keepsEveryResult: Bool = true,
        registry: StageRegistry = Self.registry
    ) async throws -> RunOutcome {
        let workflow = try workflow(json, registry: registry)
        let ledger = try ledger()
        // As the command line does: a clean close folds the write-ahead log back into the database file.
        defer { try? ledger.close() }
        let discovery = try InputDiscovery.discover(
            paths: [root.appendingPathComponent("in").path], include: [], exclude: [], recursive: false)
        let plan = try await BatchPlanner(workflow: workflow, registry: registry).plan(
            discovery, store: ledger, workflow: workflow.name)
        var runner = Runner(
            workflow: workflow, registry: registry, store: ledger,
            redactor: SecretRedactor(names: workflow.environmentNames, environment: environment),
            scratchRoot: state.appendingPathComponent("scratch"), environment: environment, jobs: jobs,
            slots: slots ?? ResourceSlots(limits), running: RunningItems(), sink: log)
        runner.keepsEveryResult = keepsEveryResult
        return try await runner.run(plan, file: "test.json")
    }
}

/// A workflow of test.probe stages `a`, `b`, `c` (in order) with keys unique to `prefix`.
func probeWorkflow(_ prefix: String, b: String = "", retry: String = #"{"attempts": 1}"#) -> String {
    """
    {"version": 1, "name": "t", "defaults": {"retry": \(retry)}, "stages": [
      {"id": "a", "uses": "test.probe", "with": {"key": "\(prefix)-a-${input.stem}", "value": "${input.stem}"}},
      {"id": "b", "uses": "test.probe", "with": {"key": "\(prefix)-b-${input.stem}", "value": "${a.value}-b"\(b)}},
      {"id": "c", "uses": "test.probe", "with": {"key": "\(prefix)-c-${input.stem}", "value": "${b.value}-c"}}
    ]}
    """
}

/// A token service for tests: `test.token` hands out the current token; `test.guarded` accepts only it.
enum TokenService {
    static let current = NIOLockedValueBox<String>("token-one-1234")
    static let guardedRuns = NIOLockedValueBox<Int>(0)
}

struct TokenStage: Stage {
    struct Options: StageOptions {}
    struct Outputs: StageOutputs {
        @Output("The token.") var token = ""
    }
    static let stageType = "test.token"
    static let summary = "Hands out the current token (tests only)."
    init() {}
    /// Logs the token it hands out, as a careless token script would, so the tests see that no line of a secret
    /// stage is stored.
    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let token = TokenService.current.withLockedValue { $0 }
        context.logger.info("handing out \(token)")
        return Outputs(token: token)
    }
}

struct GuardedStage: Stage {
    struct Options: StageOptions {
        @Option("The token.") var token: String
        @Option("Rotate the token on the first call.") var rotateFirst = false
    }
    struct Outputs: StageOutputs {
        @Output("Accepted.") var ok = false
    }
    static let stageType = "test.guarded"
    static let summary = "Accepts only the current token (tests only)."
    init() {}
    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let first = TokenService.guardedRuns.withLockedValue { runs -> Bool in
            runs += 1
            return runs == 1
        }
        if first && options.rotateFirst { TokenService.current.withLockedValue { $0 = "token-\(UUID().uuidString)" } }
        guard options.token == TokenService.current.withLockedValue({ $0 }) else {
            throw StageFailure("401 token \(options.token) expired", disposition: .credentialsExpired)
        }
        return Outputs(ok: true)
    }
}

/// Records how many stages of each resource are running at once, per test key.
enum Occupancy {
    struct Counts: Sendable {
        var now: [StageResource: Int] = [:]
        var peak: [StageResource: Int] = [:]
        /// Whether a network stage ran while a cpu stage was running.
        var overlapped = false
    }

    static let counts = NIOLockedValueBox<[String: Counts]>([:])

    /// Holds a place of `resource` under `key` for `seconds`.
    static func occupy(_ resource: StageResource, key: String, seconds: Double) async throws {
        counts.withLockedValue { all in
            var counts = all[key, default: Counts()]
            counts.now[resource, default: 0] += 1
            counts.peak[resource] = max(counts.peak[resource, default: 0], counts.now[resource, default: 0])
            if counts.now[.cpu, default: 0] > 0, counts.now[.network, default: 0] > 0 { counts.overlapped = true }
            all[key] = counts
        }
        defer { counts.withLockedValue { $0[key]?.now[resource, default: 1] -= 1 } }
        try await Task.sleep(for: .seconds(seconds))
    }
}

/// Options of the occupying test stages.
struct OccupyOptions: StageOptions {
    @Option("Occupancy key.") var key: String
    @Option("Seconds to hold the resource.") var seconds = 0.05
}

/// A processor-bound stage for tests.
struct CPUStage: Stage {
    typealias Options = OccupyOptions
    struct Outputs: StageOutputs {}
    static let stageType = "test.cpu"
    static let summary = "Holds a cpu slot (tests only)."
    static let resource = StageResource.cpu
    init() {}
    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        try await Occupancy.occupy(.cpu, key: options.key, seconds: options.seconds)
        return Outputs()
    }
}

/// A transfer stage for tests.
struct TransferStage: Stage {
    typealias Options = OccupyOptions
    struct Outputs: StageOutputs {}
    static let stageType = "test.transfer"
    static let summary = "Holds a network slot (tests only)."
    static let resource = StageResource.network
    init() {}
    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        try await Occupancy.occupy(.network, key: options.key, seconds: options.seconds)
        return Outputs()
    }
}

/// A stage that retries itself (as the upload stages do): it reports a retry for each attempt of its policy
/// but the last, counts its runs under `key`, and then fails retryably.
struct SelfRetryingStage: Stage {
    struct Options: StageOptions {
        @Option("Counter name.") var key: String
    }
    struct Outputs: StageOutputs {}
    static let stageType = "test.selfRetrying"
    static let summary = "Retries by itself, then fails (tests only)."
    static let retriesItself = true
    static let runs = NIOLockedValueBox<[String: Int]>([:])
    init() {}
    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        Self.runs.withLockedValue { $0[options.key, default: 0] += 1 }
        for attempt in 1..<context.retryPolicy.attempts {
            context.retrying(
                attempt: attempt, after: .zero,
                because: StageFailure.retryable("request \(attempt) failed", kind: .network))
        }
        throw StageFailure.retryable("the last request failed", kind: .network)
    }
}

/// A stage for tests that writes a file and names it in its `path` output: the same bytes every time, or, with
/// `vary`, bytes that differ from run to run.
struct FileMakerStage: Stage {
    struct Options: StageOptions {
        @Option("The file to write.") var path: String
        @Option("Counter name.") var key: String
        @Option("Write different bytes at every run.") var vary = false
    }

    struct Outputs: StageOutputs {
        @Output("The file.") var path = ""
    }

    static let stageType = "test.file"
    static let summary = "Writes a file (tests only)."

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let run = ProbeStage.counts.withLockedValue { counts in
            counts[options.key, default: 0] += 1
            return counts[options.key, default: 0]
        }
        try Data((options.vary ? "run \(run)\n" : "always the same\n").utf8).write(
            to: URL(fileURLWithPath: options.path))
        return Outputs(path: options.path)
    }
}
