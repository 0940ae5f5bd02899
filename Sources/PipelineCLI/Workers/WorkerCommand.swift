import ArgumentParser
import AsyncHTTPClient
import Foundation
import HTTPTransport
import Logging
import NIOConcurrencyHelpers
import Notifications
import PipelineKit
import SharedBatch
import StageRuntime
import UploadStages

import struct StageKit.TimeSpan

/// `pipeline worker --db URL`: runs the items of the batches submitted to a PostgreSQL database, beside other
/// workers on this machine or others, until SIGTERM or Ctrl-C (which let its items go for another worker to
/// resume).
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run the queued items of a shared batch, beside other workers, until stopped.")

    @OptionGroup var batch: SharedBatchOptions

    @OptionGroup var runOptions: RunOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var notifyOptions: NotifyOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How long a claim holds an item without a heartbeat; a dead worker's items are taken over after it.",
            valueName: "DURATION"))
    var lease: String = "30s"

    @Option(name: .long, help: ArgumentHelp("How often an idle worker looks for work.", valueName: "DURATION"))
    var poll: String = "500ms"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where stages keep their scratch files; a folder every worker shares lets a takeover reuse them (default: a folder per database in the system's temporary folder).",
            valueName: "DIR"))
    var artifacts: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Share the segments of segmented transcodes with the other workers through this store: a folder every worker shares, or s3://bucket/prefix (with the credentials s3.upload reads). Without it, each worker encodes its items' segments itself.",
            valueName: "DIR|s3://BUCKET/PREFIX"))
    var segments: String?

    @Option(
        name: .customLong("metrics-port"),
        help: ArgumentHelp("Serve Prometheus metrics at http://HOST:PORT/metrics.", valueName: "PORT"))
    var metricsPort: Int?

    @Option(
        name: .customLong("metrics-host"),
        help: ArgumentHelp("The address the metrics are served on.", valueName: "HOST"))
    var metricsHost: String = "127.0.0.1"

    func validate() throws {
        guard let lease = TimeSpan(parsing: lease)?.duration, lease >= .seconds(1) else {
            throw ValidationError("--lease expects a duration of at least 1s, such as 30s or 2m, not \(lease)")
        }
        guard let poll = TimeSpan(parsing: poll)?.duration, poll >= .milliseconds(10) else {
            throw ValidationError("--poll expects a duration of at least 10ms, such as 500ms or 2s, not \(poll)")
        }
        if let metricsPort, !(0...65535).contains(metricsPort) {
            throw ValidationError("--metrics-port must be from 0 to 65535")
        }
    }

    func run() async throws {
        // The stage type that farms segments encodes other workers' units; a plugin that cannot load stops here.
        let registry = segments == nil ? nil : try StageCatalog.registry(plugins: pluginOptions.paths)
        let endpoint: MetricsEndpoint?
        if let metricsPort {
            do {
                endpoint = try await MetricsEndpoint.start(host: metricsHost, port: metricsPort)
            } catch {
                throw CommandFailure(
                    .failed, "pipeline: cannot serve metrics on \(metricsHost):\(metricsPort): \(error)")
            }
        } else {
            endpoint = nil
        }
        // After the metrics system is bootstrapped: a metric binds to the factory in place when it is made.
        let metrics = WorkerMetrics()
        let database = try await batch.openForWorker()
        let client = HTTPClient.makeForStages()
        let settings = WorkerSettings(
            jobs: runOptions.jobs, lease: TimeSpan(parsing: lease)?.duration ?? .seconds(30),
            poll: TimeSpan(parsing: poll)?.duration ?? .milliseconds(500))
        // Item numbers are a database's own: the default folder is one per database.
        let scratch = URL(
            fileURLWithPath: artifacts
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-worker")
                .appendingPathComponent(database.location.replacingOccurrences(of: "/", with: "_")).path
        ).standardizedFileURL
        // One set of slots for every runner and for units of other items' encodes: --cpu-jobs holds for them all.
        let slots = ResourceSlots(runOptions.resourceLimits)
        let notifier = NotifyOptions.notifier(
            try notifyOptions.resolvedTargets(), log: PostgresStore(database: database))
        let drain = notifier.map { QueueDrainWatch(database: database, notifier: $0) }
        let factory = RunnerFactoryBuilder(
            runOptions: runOptions, plugins: pluginOptions.paths, scratchRoot: scratch, client: client,
            metrics: metrics, slots: slots
        ) { sink, workflow in
            guard let notifier, let drain else { return sink }
            return NotifyingSink(sink, notifier: notifier, workflow: workflow, onItemChange: { drain.lookSoon() })
        }
        let sink: any RunEventSink = runOptions.json ? JSONLinesRenderer() : HumanRenderer(live: false)
        let segmentWork: SegmentWork?
        do {
            if let segments, let registry {
                segmentWork = try await Self.segmentWork(
                    segments, registry: registry, client: client, scratch: scratch, slots: slots, sink: sink)
            } else {
                segmentWork = nil
            }
        } catch {
            try? await client.shutdown()
            await database.close()
            await endpoint?.stop()
            throw CommandFailure(.invalid, "pipeline: --segments \(segments ?? ""): \(error)")
        }
        let worker = Worker(
            database: database, settings: settings, sink: sink, metrics: metrics, segments: segmentWork,
            makeRunner: factory.runner)
        let failure = await SignalHandling.cancellingOnSignal { () async -> (any Error)? in
            do {
                try await worker.run()
                return nil
            } catch {
                return error
            }
        }
        try? await client.shutdown()
        await notifier?.finish(within: NotifyOptions.grace)
        await database.close()
        await endpoint?.stop()
        if let failure { throw CommandFailure.failed(failure) }
    }

    /// The segment store at `address` and how this worker encodes a unit into it, as the stage type of `registry`
    /// that farms segments does it: written into `scratch`'s `units` folder, then put in the store.
    private static func segmentWork(
        _ address: String, registry: StageRegistry, client: HTTPClient, scratch: URL, slots: ResourceSlots,
        sink: any RunEventSink
    ) async throws -> SegmentWork {
        let store = try segmentStore(
            address: address, environment: ProcessInfo.processInfo.environment, httpClient: client)
        let logger = Logger(label: "pipeline.segments") { _ in
            EventLogHandler(sink: sink, redactor: .none, item: nil, stage: nil, logLevel: .info)
        }
        // A folder of this worker's own: workers that share --artifacts never write the same unit file.
        let units = scratch.appendingPathComponent("units").appendingPathComponent(
            "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)")
        guard let encoding = await registry.segmentEncoding(store: store, folder: units, logger: logger) else {
            throw WorkerError(message: "no registered stage type splits its work into segment units")
        }
        // A unit is encoded within --cpu-jobs, as a stage's encode is.
        let limited = SegmentEncoding(build: encoding.build) { claim, progress in
            try await slots.withSlot(.cpu) { try await encoding.encode(claim, progress) }
        }
        return SegmentWork(store: store, encoding: limited)
    }
}

/// Builds a worker's runners: a submitted workflow is loaded with this machine's stage types and plugins (and
/// those it declares, relative to the folder it was submitted from) and its environment. The first runner is made
/// from the command's options; every later one takes its settings and running items, and all share the worker's
/// resource slots, so `--cpu-jobs` and `--transfers` hold across workflow versions and units of other items.
private struct RunnerFactoryBuilder: Sendable {
    var runOptions: RunOptions
    var plugins: [String]
    var scratchRoot: URL
    var client: HTTPClient
    var metrics: WorkerMetrics
    var slots: ResourceSlots
    /// What a workflow's runner's events pass through besides the metrics (notifications, which name the workflow).
    var notifying: @Sendable (any RunEventSink, _ workflow: String) -> any RunEventSink
    private let first = NIOLockedValueBox<Runner?>(nil)
    /// The terminal's sink that the first runner made: every runner's events end there.
    private let terminal = NIOLockedValueBox<(any RunEventSink)?>(nil)

    init(
        runOptions: RunOptions, plugins: [String], scratchRoot: URL, client: HTTPClient, metrics: WorkerMetrics,
        slots: ResourceSlots, notifying: @escaping @Sendable (any RunEventSink, _ workflow: String) -> any RunEventSink
    ) {
        self.runOptions = runOptions
        self.plugins = plugins
        self.scratchRoot = scratchRoot
        self.client = client
        self.metrics = metrics
        self.slots = slots
        self.notifying = notifying
    }

    var runner: RunnerFactory {
        { submitted, store in try self.make(submitted, store: store) }
    }

    private func make(_ submitted: SubmittedWorkflow, store: any StateStore) throws -> Runner {
        let (workflow, registry) = try load(submitted)
        let environment = ProcessInfo.processInfo.environment
        let missing = workflow.missingEnvironment(in: environment)
        guard missing.isEmpty else {
            throw WorkerError(
                message:
                    "the workflow needs these environment variables, which are not set on this worker: \(missing.joined(separator: ", "))"
            )
        }
        return first.withLockedValue { first in
            guard let settings = first else {
                let runner = runOptions.runner(
                    workflow: workflow, registry: registry, store: store, scratchRoot: scratchRoot,
                    environment: environment, client: client, keepsEveryResult: false, slots: slots,
                    recording: { sink in
                        terminal.withLockedValue { $0 = sink }
                        return metrics.recording(to: notifying(sink, workflow.name))
                    })
                first = runner
                return runner
            }
            var runner = Runner(
                workflow: workflow, registry: registry, store: store,
                redactor: SecretRedactor(names: workflow.environmentNames, environment: environment),
                scratchRoot: settings.scratchRoot, environment: environment, jobs: settings.jobs,
                slots: slots, running: settings.running, services: settings.services,
                logLevel: settings.logLevel,
                sink: terminal.withLockedValue { $0 }.map { metrics.recording(to: notifying($0, workflow.name)) }
                    ?? settings.sink)
            runner.keepsEveryResult = settings.keepsEveryResult
            return runner
        }
    }

    /// A submitted workflow loaded with this machine's stage types, its own plugins and the worker's.
    private func load(_ submitted: SubmittedWorkflow) throws -> (Workflow, StageRegistry) {
        let declared = WorkflowFile.declaredPlugins(
            in: submitted.document, file: URL(fileURLWithPath: submitted.file))
        let registry = try StageCatalog.registry(plugins: plugins + declared)
        do {
            let workflow = try WorkflowLoader(registry: registry).load(
                data: submitted.document, file: submitted.file, varOverrides: submitted.vars)
            return (workflow, registry)
        } catch {
            throw WorkerError(message: error.diagnostics.map(\.description).joined(separator: "\n"))
        }
    }
}
