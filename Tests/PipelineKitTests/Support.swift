import Foundation
import PipelineKit
import Synchronization

/// A stage for tests: counts its runs per key, can fail a number of times, sleep, and checkpoint.
struct ProbeStage: Stage {
    struct Options: Decodable, Sendable {
        var key: String
        var failTimes: Int?
        var fatal: Bool?
        var sleep: Double?
        var value: JSONValue?
    }

    struct Outputs: Encodable, Sendable {
        var value: JSONValue
        var run: Int
        var resumed: JSONValue?
    }

    static let type = "test.probe"
    static let summary = "Counts its runs (tests only)."
    static let optionSchema = OptionSchema([
        OptionField("key", .string, required: true, "Counter name."),
        OptionField("failTimes", .integer, "Fail this many times first."),
        OptionField("fatal", .boolean, "Fail fatally rather than retryably."),
        OptionField("sleep", .number, "Seconds to sleep after checkpointing."),
        OptionField("value", .any, "Returned as the value output."),
    ])
    static let outputSchema = OutputSchema([
        OutputField("value", "The value option."), OutputField("run", "How many times it ran."),
        OutputField("resumed", "The resume data it got."),
    ])

    static let counts = Mutex<[String: Int]>([:])

    static func runs(_ key: String) -> Int {
        counts.withLock { $0[key, default: 0] }
    }

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let run = Self.counts.withLock { counts in
            counts[options.key, default: 0] += 1
            return counts[options.key, default: 0]
        }
        if let failTimes = options.failTimes, run <= failTimes {
            throw options.fatal == true ? StageFailure("boom \(run)") : StageFailure.retryable("flaky \(run)")
        }
        let resumed = context.resumeData
        try await context.checkpoint(["step": JSONValue.int(run)])
        if let sleep = options.sleep { try await Task.sleep(for: .milliseconds(Int(sleep * 1000))) }
        return Outputs(value: options.value ?? .null, run: run, resumed: resumed)
    }
}

/// Collects a run's events.
final class EventLog: RunEventSink {
    let events = Mutex<[RunEvent]>([])

    func emit(_ event: RunEvent) {
        events.withLock { $0.append(event) }
    }

    /// (item, stage, outcome) of every finished stage.
    var finished: [(String, String, StageOutcome)] {
        events.withLock { events in
            events.compactMap {
                if case .stageFinished(let item, let stage, let outcome, _, _) = $0 { (item, stage, outcome) } else { nil }
            }
        }
    }

    func outcomes(_ stage: String) -> [StageOutcome] {
        finished.filter { $0.1 == stage }.map(\.2)
    }

    var itemErrors: [String] {
        events.withLock { events in
            events.compactMap {
                if case .itemFinished(_, false, let error, _) = $0 { error } else { nil }
            }
        }
    }
}

/// A temporary folder with a state folder and input files, removed at the end.
struct Sandbox: ~Copyable {
    let root: URL

    init(files: Int = 1) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("pk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("in"), withIntermediateDirectories: true)
        for index in 0..<files {
            try Data("item \(index)\n".utf8).write(to: root.appendingPathComponent("in/file\(index).txt"))
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: root)
    }

    var state: URL { root.appendingPathComponent("state") }

    func items() throws -> [InputItem] {
        try InputDiscovery.items(paths: [root.appendingPathComponent("in").path], include: [], exclude: [], recursive: false)
    }

    static var registry: StageRegistry {
        var registry = StageRegistry()
        registry.register(ProbeStage.self)
        registry.register(TokenStage.self)
        registry.register(GuardedStage.self)
        return registry
    }

    func workflow(_ json: String) throws -> Workflow {
        try WorkflowLoader(registry: Self.registry).load(data: Data(json.utf8), file: "test.json")
    }

    @discardableResult
    func run(
        _ json: String, environment: [String: String] = [:], log: EventLog = EventLog()
    ) async throws -> RunSummary {
        let workflow = try workflow(json)
        let store = CheckpointStore(
            folder: state, redactor: SecretRedactor(names: workflow.environmentNames, environment: environment))
        let runner = Runner(workflow: workflow, registry: Self.registry, store: store, environment: environment, sink: log)
        return await runner.run(items: try items())
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
    static let current = Mutex<String>("token-one-1234")
    static let guardedRuns = Mutex<Int>(0)
}

struct TokenStage: Stage {
    struct Options: Decodable, Sendable {}
    struct Outputs: Encodable, Sendable { var token: String }
    static let type = "test.token"
    static let summary = "Hands out the current token (tests only)."
    static let optionSchema = OptionSchema([])
    static let outputSchema = OutputSchema([OutputField("token", "The token.")])
    init() {}
    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        Outputs(token: TokenService.current.withLock { $0 })
    }
}

struct GuardedStage: Stage {
    struct Options: Decodable, Sendable { var token: String; var rotateFirst: Bool? }
    struct Outputs: Encodable, Sendable { var ok: Bool }
    static let type = "test.guarded"
    static let summary = "Accepts only the current token (tests only)."
    static let optionSchema = OptionSchema([
        OptionField("token", .string, required: true, "The token."), OptionField("rotateFirst", .boolean, "Rotate the token on the first call."),
    ])
    static let outputSchema = OutputSchema([OutputField("ok", "Accepted.")])
    init() {}
    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let first = TokenService.guardedRuns.withLock { runs -> Bool in
            runs += 1
            return runs == 1
        }
        if first && options.rotateFirst == true { TokenService.current.withLock { $0 = "token-\(UUID().uuidString)" } }
        guard options.token == TokenService.current.withLock({ $0 }) else {
            throw StageFailure("401 token \(options.token) expired", disposition: .credentialsExpired)
        }
        return Outputs(ok: true)
    }
}
