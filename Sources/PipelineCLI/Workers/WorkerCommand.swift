import ArgumentParser
import AsyncHTTPClient
import Foundation
import HTTPTransport
import Logging
import Notifications
import PipelineKit
import PluginHost
import SharedBatch
import StageRuntime
import UploadStages

import struct StageKit.TimeSpan

/// `pipeline worker --db URL`: runs the items of the batches submitted to a PostgreSQL database, beside other
/// workers on this machine or others, until SIGTERM or Ctrl-C (which let its items go for another worker to
/// resume), or until it is asked to drain or stop (`--drain`/`--stop WORKER`, or the dashboard).
struct WorkerCommand: StageCatalogCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Run the queued items of a shared batch, beside other workers, until stopped.")

    @OptionGroup var batch: SharedBatchOptions

    @OptionGroup var runOptions: RunOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var notifyOptions: NotifyOptions

    @OptionGroup(title: "Asking a running worker") var requestOptions: WorkerRequestOptions

    // The options with a default are optional, so that the parser says which were given (``givenOptions``); their
    // defaults are applied once, below, and written into their help.
    @Option(
        name: .customLong("lease"),
        help: ArgumentHelp(
            "How long a claim holds an item without a heartbeat, such as 30s or 2m; a dead worker's items are taken over after it. (default: \(TimeSpan(WorkerSettings.defaultLease).defaultValueDescription))",
            valueName: "DURATION"))
    var givenLease: TimeSpan?

    @Option(
        name: .customLong("poll"),
        help: ArgumentHelp(
            "How often an idle worker looks for work, such as 500ms or 2s. (default: \(TimeSpan(WorkerSettings.defaultPoll).defaultValueDescription))",
            valueName: "DURATION"))
    var givenPoll: TimeSpan?

    @Option(
        name: .customLong("abandon-after"),
        help: ArgumentHelp(
            "Fail an item as abandoned after this many counted takeovers without progress (1 to 100). (default: \(TakeoverLimit.defaultLimit))",
            valueName: "N"))
    var givenAbandonAfter: Int?

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
        help: ArgumentHelp("The address the metrics are served on. (default: 127.0.0.1)", valueName: "HOST"))
    var givenMetricsHost: String?

    /// `--lease`, or its default.
    var lease: TimeSpan { givenLease ?? TimeSpan(WorkerSettings.defaultLease) }
    /// `--poll`, or its default.
    var poll: TimeSpan { givenPoll ?? TimeSpan(WorkerSettings.defaultPoll) }
    /// `--abandon-after`, or its default.
    var abandonAfter: Int { givenAbandonAfter ?? TakeoverLimit.defaultLimit }
    /// `--metrics-host`, or its default.
    var metricsHost: String { givenMetricsHost ?? "127.0.0.1" }

    func validate() throws {
        guard lease.duration >= .seconds(1) else {
            throw ValidationError("--lease expects a duration of at least 1s, such as 30s or 2m, not \(lease)")
        }
        guard poll.duration >= .milliseconds(10) else {
            throw ValidationError("--poll expects a duration of at least 10ms, such as 500ms or 2s, not \(poll)")
        }
        guard TakeoverLimit.bounds.contains(abandonAfter) else {
            throw ValidationError(
                "--abandon-after expects a number of takeovers from \(TakeoverLimit.bounds.lowerBound) to \(TakeoverLimit.bounds.upperBound), not \(abandonAfter)"
            )
        }
        if let metricsPort, !(0...65535).contains(metricsPort) {
            throw ValidationError("--metrics-port must be from 0 to 65535")
        }
        if let request = requestOptions.given, let unused = givenOptions.first {
            throw ValidationError("\(request) asks a running worker and starts none: it takes only --db, not \(unused)")
        }
    }

    func run(stages catalog: StageCatalog) async throws {
        if try await requestOptions.askedAWorker(db: batch.db) { return }
        // The stage type that farms segments encodes other workers' units; a plugin that cannot load stops here.
        let registry = segments == nil ? nil : try catalog.registry(plugins: pluginOptions.paths)
        let endpoint = try await startMetrics()
        // After the metrics system is bootstrapped: a metric binds to the factory in place when it is made.
        let metrics = WorkerMetrics()
        let database = try await batch.openForWorker()
        let client = HTTPClient.makeForStages()
        let settings = WorkerSettings(
            jobs: runOptions.jobs, lease: lease.duration, poll: poll.duration, abandonAfter: abandonAfter)
        let scratch = scratchFolder(database: database.location)
        // One set of slots for every runner and for units of other items' encodes: --cpu-jobs holds for them all.
        let slots = ResourceSlots(runOptions.resourceLimits)
        let notifier = NotifyOptions.notifier(
            try notifyOptions.resolvedTargets(), log: PostgresStore(database: database))
        let drain = notifier.map { QueueDrainWatch(database: database, notifier: $0) }
        let runners = WorkerRunners(
            settings: runOptions.runnerSettings(
                scratchRoot: scratch, client: client, keepsEveryResult: false, slots: slots),
            registry: catalog.registry(plugins:), plugins: pluginOptions.paths,
            environment: ProcessInfo.processInfo.environment
        ) { sink, workflow in
            guard let notifier, let drain else { return metrics.recording(to: sink) }
            return metrics.recording(
                to: NotifyingSink(sink, notifier: notifier, workflow: workflow, onItemChange: { drain.lookSoon() }))
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
            makeRunner: runners.factory)
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

    /// Serves the metrics on `--metrics-host`:`--metrics-port`; nil without `--metrics-port`.
    private func startMetrics() async throws -> MetricsEndpoint? {
        guard let metricsPort else { return nil }
        do {
            return try await MetricsEndpoint.start(host: metricsHost, port: metricsPort)
        } catch {
            throw CommandFailure(.failed, "pipeline: cannot serve metrics on \(metricsHost):\(metricsPort): \(error)")
        }
    }

    /// The folder of the runs' files: `--artifacts`, or one per database (item numbers are a database's own), named
    /// after its `location`, in the temporary folder.
    private func scratchFolder(database location: String) -> URL {
        URL(
            fileURLWithPath: artifacts
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-worker")
                .appendingPathComponent(location.replacingOccurrences(of: "/", with: "_")).path
        ).standardizedFileURL
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
