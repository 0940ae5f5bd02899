public import Foundation
public import Logging
public import StageKit

/// What the runners of one command share, whichever workflow each runs: where stages get their scratch folders,
/// how much runs at once, the services stages use, how much they log and where the events go.
///
/// `pipeline run` makes one runner from its settings; a worker makes one per submitted workflow version from the
/// same settings, so that all of them hold `--cpu-jobs` and `--transfers` together (one set of ``slots``) and
/// answer a cancel request for any item the worker runs (one set of ``running`` items).
public struct RunnerSettings: Sendable {
    /// Where stages get their scratch folders.
    public var scratchRoot: URL
    /// Items processed at the same time, per runner.
    public var jobs: Int
    /// The resource slots every runner's stages wait for.
    public var slots: ResourceSlots
    /// The items every runner works on.
    public var running: RunningItems
    /// Shared resources for stages (an HTTP client, a bandwidth limit).
    public var services: ServiceValues
    /// The lowest level of stage log lines that are reported.
    public var logLevel: Logger.Level
    /// Receives the runs' events.
    public var sink: any RunEventSink
    /// Whether a run keeps every file's result (a report reads them), or only the failed and interrupted ones.
    public var keepsEveryResult: Bool

    /// Settings with slots and running items of their own.
    public init(
        scratchRoot: URL, jobs: Int = 1, slots: ResourceSlots, running: RunningItems = RunningItems(),
        services: ServiceValues = ServiceValues(), logLevel: Logger.Level = .info, sink: any RunEventSink,
        keepsEveryResult: Bool = true
    ) {
        self.scratchRoot = scratchRoot
        self.jobs = jobs
        self.slots = slots
        self.running = running
        self.services = services
        self.logLevel = logLevel
        self.sink = sink
        self.keepsEveryResult = keepsEveryResult
    }

    /// A runner of `workflow` with these settings, writing to `store`; the secrets it keeps out of the store and
    /// the events are those of the workflow's `env.*` variables in `environment`.
    public func runner(
        workflow: Workflow, registry: StageRegistry, store: any StateStore, environment: [String: String]
    ) -> Runner {
        var runner = Runner(
            workflow: workflow, registry: registry, store: store,
            redactor: SecretRedactor(names: workflow.environmentNames, environment: environment),
            scratchRoot: scratchRoot, environment: environment, jobs: jobs, slots: slots, running: running,
            services: services, logLevel: logLevel, sink: sink)
        runner.keepsEveryResult = keepsEveryResult
        return runner
    }
}
