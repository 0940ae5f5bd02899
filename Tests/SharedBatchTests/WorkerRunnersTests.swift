import Foundation
import PipelineKit
import StageKit
import Synchronization
import TestSupport
import Testing

@testable import SharedBatch

/// A worker's runners: each submitted workflow loaded with this machine's stage types, run with the worker's
/// shared settings, or refused with the reason.
@Suite struct WorkerRunnersTests {
    static func submitted(_ name: String, file: String = "/flows/w.json", _ extra: String = "") -> SubmittedWorkflow {
        let document = """
            {"version": 1, "name": "\(name)", \(extra) "stages": [{"id": "a", "uses": "test.quiet"}]}
            """
        return SubmittedWorkflow(
            name: name, file: file, document: Data(document.utf8), vars: [:], digest: "d", stages: ["a"])
    }

    /// Runners whose machine has the stage type `test.quiet` and no plugin: a plugin is refused as the program's
    /// catalog refuses one whose file is missing.
    static func runners(
        environment: [String: String] = [:], events: NamesSeen = NamesSeen()
    ) throws -> (WorkerRunners, RunnerSettings) {
        let settings = RunnerSettings(
            scratchRoot: URL(fileURLWithPath: "/tmp/scratch"), jobs: 3,
            slots: ResourceSlots(ResourceLimits([.cpu: 1])), sink: QuietSink(), keepsEveryResult: false)
        var quiet = StageRegistry()
        try quiet.register(QuietStage.self, source: .builtIn)
        let registry = quiet
        let runners = WorkerRunners(
            settings: settings,
            registry: { plugins in
                if let plugin = plugins.first { throw MissingPlugin(path: plugin) }
                return registry
            },
            environment: environment
        ) { sink, workflow in
            events.note(workflow)
            return sink
        }
        return (runners, settings)
    }

    /// Runners of two workflows share the worker's slots and running items (so `--cpu-jobs` holds across them and a
    /// cancel reaches any of its items), and each one's events pass through the worker's wrapper, which learns the
    /// workflow's name.
    @Test func everyRunnerSharesTheWorkersSettings() throws {
        let scratch = try Scratch()
        let store = try SQLiteLedger(folder: scratch.root)
        defer { try? store.close() }
        let events = NamesSeen()
        let (runners, settings) = try Self.runners(events: events)
        let first = try runners.runner(for: Self.submitted("first"), store: store)
        let second = try runners.runner(for: Self.submitted("second"), store: store)
        for runner in [first, second] {
            #expect(runner.slots === settings.slots && runner.running === settings.running)
            #expect(runner.jobs == 3 && runner.scratchRoot == settings.scratchRoot && !runner.keepsEveryResult)
        }
        #expect([first.workflow.name, second.workflow.name] == ["first", "second"])
        #expect(events.names == ["first", "second"])
    }

    /// A workflow this worker cannot run is refused with what it lacks: an environment variable, a plugin that the
    /// workflow declares (relative to the folder it was submitted from), a stage type. Each reason is the whole
    /// message, as the worker's log line shows it after "cannot run workflow W as submitted from F: ": nothing may be
    /// put before it (such as the stray "pipeline: " a plugin's error once had).
    @Test func aWorkflowThisWorkerCannotRunIsRefusedWithTheReason() throws {
        let scratch = try Scratch()
        let store = try SQLiteLedger(folder: scratch.root)
        defer { try? store.close() }
        let (runners, _) = try Self.runners(environment: ["OTHER": "x"])
        let cases: [(SubmittedWorkflow, String)] = [
            (
                Self.submitted("env", #""vars": {"token": "${env.TOKEN}"},"#),
                "the workflow needs these environment variables, which are not set on this worker: TOKEN"
            ),
            (
                Self.submitted("plugin", file: "/flows/sub/w.json", #""plugins": ["../lib/missing.so"],"#),
                "plugin /flows/lib/missing.so: no such file"
            ),
            (
                SubmittedWorkflow(
                    name: "unknown", file: "/w.json",
                    document: Data(
                        #"{"version": 1, "name": "unknown", "stages": [{"id": "a", "uses": "test.quite"}]}"#.utf8),
                    vars: [:], digest: "d", stages: ["a"]),
                #"/w.json:1:66: stages[0].uses: unknown stage type "test.quite" (did you mean "test.quiet"?) "#
                    + #"(pipeline stages lists them; a plugin's stage types are added with --plugin PATH or the "#
                    + #"workflow's "plugins")"#
            ),
        ]
        for (submitted, reason) in cases {
            let error = #expect(throws: WorkerError.self, "\(submitted.name)") {
                try runners.runner(for: submitted, store: store)
            }
            #expect(error?.message == reason)
        }
    }
}

/// A plugin library that is not there, described as the plugin loader describes it.
private struct MissingPlugin: Error, CustomStringConvertible {
    /// The plugin's path, as the worker resolved it.
    var path: String
    var description: String { "plugin \(path): no such file" }
}

/// The workflow names a worker's event wrapper was given, in order.
final class NamesSeen: Sendable {
    private let seen = Mutex<[String]>([])

    /// The names so far.
    var names: [String] { seen.withLock { $0 } }

    /// Notes `name`.
    func note(_ name: String) {
        seen.withLock { $0.append(name) }
    }
}

/// A stage that does nothing, for workflows whose stages do not matter.
private struct QuietStage: Stage {
    struct Options: StageOptions {}
    struct Outputs: StageOutputs {}
    static let stageType = "test.quiet"
    static let summary = "Does nothing (tests only)."
    init() {}
    func run(_ options: Options, context: StageContext) async throws -> Outputs { Outputs() }
}
