import ArgumentParser
import Foundation
import Logging
import PipelineKit
import UploadStages

import struct StageKit.ByteCount
import struct StageKit.InputItem
import struct StageKit.ServiceValues

/// `pipeline run WORKFLOW`: runs a workflow over its inputs, resuming from the state folder.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a workflow over its input files; running it again resumes where it stopped.")

    @Argument(help: "The workflow file.")
    var workflow: String

    @Option(
        name: .long,
        help: ArgumentHelp(
            "An input file or folder (repeatable); replaces the workflow's inputs.path.", valueName: "PATH"))
    var input: [String] = []

    @OptionGroup var varOptions: VarOptions

    @OptionGroup var stateOptions: StateOptions

    @OptionGroup var pluginOptions: PluginOptions

    @Option(name: .long, help: "Items processed at the same time.")
    var jobs: Int = 1

    @Option(
        name: .long,
        help: ArgumentHelp("Limit uploads to this many bytes per second across the run, e.g. 20MiB.", valueName: "SIZE")
    )
    var bwlimit: String?

    @Flag(name: .long, help: "Print events as JSON lines, for machines.")
    var json = false

    @Flag(name: .long, help: "Forget this workflow's checkpoints and start over.")
    var fresh = false

    @Flag(name: .shortAndLong, help: "Show the stages' debug log lines.")
    var verbose = false

    func validate() throws {
        guard jobs >= 1, jobs <= 64 else { throw ValidationError("--jobs must be from 1 to 64") }
        if let bwlimit, (ByteCount(parsing: bwlimit)?.bytes ?? 0) <= 0 {
            throw ValidationError("--bwlimit expects bytes per second such as 20MiB or 5000000, not \(bwlimit)")
        }
    }

    func run() async throws {
        let (workflow, registry) = try WorkflowFile.load(
            self.workflow, plugins: pluginOptions.paths, varOverrides: try varOptions.overrides())
        let environment = try WorkflowFile.environment(for: workflow, file: self.workflow)
        let items = try discoverItems(workflow)
        let (lock, store) = try WorkflowFile.openState(stateOptions.state, for: workflow, environment: environment)
        do {
            if fresh { try await store.removeRun(workflow.name) }
            try await store.save(
                RunRecord(
                    workflow: workflow.name, file: URL(fileURLWithPath: self.workflow).standardizedFileURL.path,
                    stages: workflow.stages.map(\.id)), run: workflow.name)
        } catch {
            Output.error("pipeline: \(error)")
            throw ExitCode(1)
        }

        let sink: any RunEventSink =
            json ? JSONLinesRenderer() : HumanRenderer(live: Output.isTerminal)
        var services = ServiceValues()
        if let limit = bwlimit.flatMap(ByteCount.init(parsing:)) {
            services[BandwidthLimitKey.self] = BandwidthLimiter(bytesPerSecond: limit.bytes)
        }
        let runner = Runner(
            workflow: workflow, registry: registry, store: store, environment: environment, jobs: jobs,
            services: services, logLevel: verbose ? .debug : .info, sink: sink)
        let summary = await SignalHandling.cancellingOnSignal {
            await runner.run(items: items)
        }
        withExtendedLifetime(lock) {}
        if summary.interrupted { throw ExitCode(130) }
        if summary.failed > 0 { throw ExitCode(1) }
    }

    private func discoverItems(_ workflow: Workflow) throws -> [InputItem] {
        let selection = workflow.inputs
        let paths = input.isEmpty ? selection.map { [$0.path] } ?? [] : input
        guard !paths.isEmpty else {
            Output.error("\(self.workflow): no inputs: give --input PATH or set inputs.path in the workflow")
            throw ExitCode(2)
        }
        do {
            return try InputDiscovery.items(
                paths: paths, include: selection?.include ?? [], exclude: selection?.exclude ?? [],
                recursive: selection?.recursive ?? false, skipping: [stateOptions.state])
        } catch {
            Output.error("pipeline: \(error)")
            throw ExitCode(2)
        }
    }
}

/// Reading a workflow file for a command, with problems printed and exit code 2.
enum WorkflowFile {
    /// The process environment, once every variable the workflow needs is known to be set (else exit 2).
    static func environment(for workflow: Workflow, file: String) throws -> [String: String] {
        let environment = ProcessInfo.processInfo.environment
        let missing = workflow.missingEnvironment(in: environment)
        guard missing.isEmpty else {
            Output.error(
                "\(file): the workflow needs these environment variables, which are not set: \(missing.joined(separator: ", "))"
            )
            throw ExitCode(2)
        }
        return environment
    }

    /// The state folder, locked for this process (a busy folder ends the command with exit code 1), and its
    /// store with the workflow's secrets redacted.
    static func openState(_ path: String, for workflow: Workflow, environment: [String: String]) throws -> (
        StateLock, CheckpointStore
    ) {
        let folder = URL(fileURLWithPath: path).standardizedFileURL
        do {
            let lock = try StateLock(folder: folder)
            return (
                lock,
                CheckpointStore(
                    folder: folder, redactor: SecretRedactor(names: workflow.environmentNames, environment: environment)
                )
            )
        } catch {
            Output.error("pipeline: \(error)")
            throw ExitCode(1)
        }
    }

    /// The workflow and the stage types it may use: built in, compiled in, and from the plugins given on the
    /// command line and in the workflow's `"plugins"` (relative to the workflow file's folder).
    static func load(_ path: String, plugins: [String], varOverrides: [String: String] = [:]) throws -> (
        Workflow, StageRegistry
    ) {
        let url = URL(fileURLWithPath: path)
        let declared = ((try? Data(contentsOf: url)).map(WorkflowLoader.pluginPaths(in:)) ?? []).map { plugin in
            plugin.hasPrefix("/")
                ? plugin : url.deletingLastPathComponent().appendingPathComponent(plugin).standardizedFileURL.path
        }
        let registry = try StageCatalog.registry(plugins: plugins + declared)
        do {
            return (try WorkflowLoader(registry: registry).load(contentsOf: url, varOverrides: varOverrides), registry)
        } catch {
            for diagnostic in error.diagnostics {
                var shown = diagnostic
                shown.file = path
                Output.error(shown.description)
            }
            let count = error.diagnostics.count
            Output.error("\(path): \(count) problem\(count == 1 ? "" : "s"); nothing ran")
            throw ExitCode(2)
        }
    }
}

/// `--var KEY=VALUE`, shared by the commands that load a workflow to run it.
struct VarOptions: ParsableArguments {
    @Option(
        name: .customLong("var"),
        help: ArgumentHelp("Override a var declared by the workflow (repeatable).", valueName: "KEY=VALUE"))
    var assignments: [String] = []

    /// The overrides by name; a malformed one ends the command with exit code 2.
    func overrides() throws -> [String: String] {
        var values: [String: String] = [:]
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                Output.error("pipeline: --var \(assignment): expected KEY=VALUE")
                throw ExitCode(2)
            }
            values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        return values
    }
}
