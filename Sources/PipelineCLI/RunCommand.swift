import ArgumentParser
import AsyncHTTPClient
import Foundation
import HTTPTransport
import Logging
import Notifications
import PipelineKit
import PluginHost

import struct StageKit.ByteCount
import struct StageKit.ServiceValues

/// `pipeline run WORKFLOW`: runs a workflow over its inputs, resuming from the ledger: a file whose content is
/// done runs nothing, however it is named; changed content at a known path runs as a new version.
struct RunCommand: StageCatalogCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a workflow over its input files; running it again resumes where it stopped.")

    @Argument(help: "The workflow file.")
    var workflow: String

    @OptionGroup var inputOptions: InputOptions

    @OptionGroup var varOptions: VarOptions

    @OptionGroup var stateOptions: StateOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var runOptions: RunOptions

    @OptionGroup var rerunOptions: RerunOptions

    @OptionGroup var notifyOptions: NotifyOptions

    @Flag(name: .long, help: "Forget this workflow's items and start over.")
    var fresh = false

    @Option(
        name: .long,
        help: ArgumentHelp("Write a JSON report of every item to this file when the run ends.", valueName: "FILE"))
    var report: String?

    func validate() throws {
        if fresh && rerunOptions.failed {
            throw ValidationError("--fresh forgets which items failed; give one of --fresh and --failed")
        }
        if let report, let problem = RunReport.unwritable(report) {
            throw ValidationError("--report \(report): \(problem)")
        }
    }

    func run(stages catalog: StageCatalog) async throws {
        let (workflow, registry) = try WorkflowFile.load(
            self.workflow, catalog: catalog, plugins: pluginOptions.paths, varOverrides: try varOptions.overrides())
        BatchInputs.preloadMedia(for: workflow, registry: registry)
        let environment = try WorkflowFile.environment(for: workflow, file: self.workflow)
        let notifyTargets = try notifyOptions.resolvedTargets(workflow: workflow, environment: environment)
        let discovery = try BatchInputs.discover(
            workflow, inputs: inputOptions.input, file: self.workflow, state: stateOptions.state)
        let state = try StateFolder.openForWriting(stateOptions.state, fresh: fresh)
        defer { state.close() }
        // A killed run's progress is not this run's, even while it plans.
        ProgressFile.remove(in: state.folder)
        if fresh {
            try await CommandFailure.mappingErrors {
                let items = try await state.ledger.forget(workflow: workflow.name)
                // This workflow's scratch folders only: other workflows of the state folder keep their exports.
                state.removeScratch(of: state.isNewLedger ? nil : items)
            }
        }
        let plan = try await BatchInputs.plan(
            workflow, registry: registry, discovery: consume discovery, ledger: state.ledger,
            reprocess: rerunOptions.reprocess, onlyFailed: rerunOptions.failed)

        let client = HTTPClient.makeForStages()
        let notifier = NotifyOptions.notifier(notifyTargets, log: state.ledger)
        var settings = runOptions.runnerSettings(
            scratchRoot: state.scratchRoot, client: client, keepsEveryResult: report != nil)
        if let notifier { settings.sink = NotifyingSink(settings.sink, notifier: notifier, workflow: workflow.name) }
        settings.publishProgress(of: workflow.name, in: state.folder)
        defer { ProgressFile.remove(in: state.folder) }
        let runner = settings.runner(
            workflow: workflow, registry: registry, store: state.ledger, environment: environment)
        let (file, ledger) = (URL(fileURLWithPath: self.workflow).standardizedFileURL.path, state.ledger)
        let result = await SignalHandling.cancellingOnSignal(onRequest: runner.applyCancelRequests) {
            () async -> Result<RunOutcome, StateError> in
            do throws(StateError) {
                try await ledger.answerRetryRequests(takenUpBy: plan)
                return .success(try await runner.run(plan, file: file))
            } catch {
                return .failure(error)
            }
        }
        try? await client.shutdown()
        if let notifier {
            if case .success(let outcome) = result, !outcome.summary.interrupted, notifier.wants(.batchFinished) {
                await Self.announceFinish(
                    of: workflow.name, skipped: outcome.summary.skipped, store: state.ledger, notifier: notifier)
            }
            await notifier.finish(within: NotifyOptions.grace)
        }
        let outcome = try result.mapError(CommandFailure.failed).get()
        if let report {
            try await RunReport.write(
                outcome, workflow: workflow, ledger: state.ledger, redactor: runner.redactor, to: report)
        }
        if outcome.summary.interrupted { throw CommandFailure(.interrupted) }
        if outcome.summary.failed > 0 { throw CommandFailure(.failed) }
    }
}

extension RunCommand {
    /// Announces the batch's summary as the ledger holds it now (once per outcome: a rerun that changes nothing
    /// announces nothing).
    static func announceFinish(of workflow: String, skipped: Int, store: any StateStore, notifier: Notifier) async {
        do {
            let (notice, key) = try await Notifier.batchFinished(workflow: workflow, store: store, skipped: skipped)
            notifier.announce(notice, key: key)
        } catch {
            Output.error("pipeline: warning: notifications: cannot read the batch's summary: \(error)")
        }
    }
}

/// `--reprocess` and `--failed`: which known items a run (or a plan of one, or a submit) takes up besides the
/// new and the unfinished ones.
struct RerunOptions: ParsableArguments {
    @Flag(name: .long, help: "Take up items that are done (or cancelled) again, as a new version.")
    var reprocess = false

    @Flag(name: .long, help: "Take up only the items that failed last time.")
    var failed = false

    /// Refuses both at once (exit code 2).
    func validate() throws {
        if reprocess && failed {
            throw ValidationError(
                "--reprocess takes up done items again and --failed only failed ones; give one of them")
        }
    }
}

/// How a run goes: concurrency, bandwidth and output, shared by `run` and `watch`.
struct RunOptions: ParsableArguments {
    // Optional, so that the parser says whether it was given (`pipeline worker --drain` refuses it); `jobs` is its
    // value.
    @Option(name: .customLong("jobs"), help: "Items processed at the same time. (default: 1)")
    var givenJobs: Int?

    @Option(
        name: .customLong("cpu-jobs"),
        help: "Encodes and other processor-bound stages at once (default: one per four cores, at least one).")
    var cpuJobs: Int?

    @Option(
        name: .customLong("transfers"),
        help: ArgumentHelp("Uploads and other transfers at once. (default: \(ResourceLimits.defaultTransfers))"))
    var givenTransfers: Int?

    /// `--jobs`, or 1.
    var jobs: Int { givenJobs ?? 1 }
    /// `--transfers`, or its default.
    var transfers: Int { givenTransfers ?? ResourceLimits.defaultTransfers }

    @Option(
        name: .long,
        help: ArgumentHelp("Limit uploads to this many bytes per second across the run, e.g. 20MiB.", valueName: "SIZE")
    )
    var bwlimit: ByteCount?

    @Flag(name: .long, help: "Print events as JSON lines, for machines.")
    var json = false

    @Flag(name: .shortAndLong, help: "Show the stages' debug log lines.")
    var verbose = false

    /// Refuses values out of range (exit code 2); `@OptionGroup` calls it before the command's own `validate()`.
    func validate() throws {
        guard (1...64).contains(jobs) else { throw ValidationError("--jobs must be from 1 to 64") }
        if let cpuJobs, !(1...64).contains(cpuJobs) { throw ValidationError("--cpu-jobs must be from 1 to 64") }
        guard (1...64).contains(transfers) else { throw ValidationError("--transfers must be from 1 to 64") }
        if let bwlimit, bwlimit.bytes <= 0 {
            throw ValidationError("--bwlimit expects bytes per second such as 20MiB or 5000000, not \(bwlimit)")
        }
    }

    /// `--cpu-jobs` (by default from the cores) and `--transfers`.
    var resourceLimits: ResourceLimits {
        let cpu = cpuJobs ?? ResourceLimits.defaultCPUJobs(cores: ProcessInfo.processInfo.activeProcessorCount)
        return ResourceLimits([.cpu: cpu, .network: transfers])
    }

    /// The runner settings these options describe: stages get scratch folders under `scratchRoot` and send HTTP
    /// requests through `client`; `keepsEveryResult` when the command reads every file's result (a report). A
    /// worker gives the `slots` it shares with units of other items' encodes.
    func runnerSettings(
        scratchRoot: URL, client: HTTPClient, keepsEveryResult: Bool, slots: ResourceSlots? = nil
    ) -> RunnerSettings {
        var services = ServiceValues()
        services[HTTPClientKey.self] = client
        if let bwlimit {
            services[BandwidthLimitKey.self] = BandwidthLimiter(bytesPerSecond: bwlimit.bytes)
        }
        return RunnerSettings(
            scratchRoot: scratchRoot, jobs: jobs, slots: slots ?? ResourceSlots(resourceLimits), services: services,
            logLevel: verbose ? .debug : .info,
            sink: json ? JSONLinesRenderer() : HumanRenderer(live: Output.isTerminal),
            keepsEveryResult: keepsEveryResult)
    }
}

/// Reading a workflow file for a command, with problems printed and exit code 2.
enum WorkflowFile {
    /// The process environment, once every variable the workflow needs is known to be set (else exit 2).
    static func environment(for workflow: Workflow, file: String) throws -> [String: String] {
        let environment = ProcessInfo.processInfo.environment
        let missing = workflow.missingEnvironment(in: environment)
        guard missing.isEmpty else {
            throw CommandFailure(
                .invalid,
                "\(file): the workflow needs these environment variables, which are not set: \(missing.joined(separator: ", "))"
            )
        }
        return environment
    }

    /// The workflow and the stage types it may use: those of `catalog`, and from the plugins given on the command
    /// line and in the workflow's `"plugins"` (relative to the workflow file's folder).
    static func load(
        _ path: String, catalog: StageCatalog, plugins: [String], varOverrides: [String: String] = [:]
    ) throws -> (Workflow, StageRegistry) {
        let url = URL(fileURLWithPath: path)
        let declared = (try? Data(contentsOf: url)).map { WorkflowLoader.pluginPaths(in: $0, file: url) } ?? []
        let registry = try catalog.commandRegistry(plugins: plugins + declared)
        do {
            return (try WorkflowLoader(registry: registry).load(contentsOf: url, varOverrides: varOverrides), registry)
        } catch {
            let shown = error.diagnostics.map { diagnostic in
                var shown = diagnostic
                shown.file = path
                return shown.description
            }
            let count = error.diagnostics.count
            throw CommandFailure(
                .invalid, messages: shown + ["\(path): \(count) problem\(count == 1 ? "" : "s"); nothing ran"])
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
                throw CommandFailure(.invalid, "pipeline: --var \(assignment): expected KEY=VALUE")
            }
            values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        return values
    }
}
