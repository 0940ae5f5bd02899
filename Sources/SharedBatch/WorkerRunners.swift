import Foundation
public import PipelineKit

/// A worker's runners, one per submitted workflow version. A submitted workflow is loaded with this machine's stage
/// types and plugins (and those it declares, relative to the folder it was submitted from), checked against this
/// machine's environment, and run with the worker's ``RunnerSettings``, so that every runner shares the worker's
/// slots and running items. Its events pass through `events` (metrics, notifications, which name the workflow) on
/// their way to the settings' sink.
public struct WorkerRunners: Sendable {
    private let settings: RunnerSettings
    private let makeRegistry: Registry
    private let plugins: [String]
    private let environment: [String: String]
    private let events: @Sendable (any RunEventSink, _ workflow: String) -> any RunEventSink

    /// The stage types of a workflow that uses the plugin libraries at `plugins`, or why they cannot be had (a
    /// plugin that cannot be loaded, a stage type whose name is taken). A function rather than the program's stage
    /// catalog, so that this library (and the dashboard above it) does not link the plugin loader: the command line
    /// passes its catalog's `registry(plugins:)`, a test a fixed registry. The error's description is the reason
    /// the worker gives, as it reads.
    public typealias Registry = @Sendable (_ plugins: [String]) throws -> StageRegistry

    /// Runners made with `settings`, the stage types `registry` gives for the plugin libraries at `plugins` (and
    /// those each workflow declares), and the variables of `environment`.
    public init(
        settings: RunnerSettings, registry: @escaping Registry, plugins: [String] = [],
        environment: [String: String],
        events: @escaping @Sendable (any RunEventSink, _ workflow: String) -> any RunEventSink = { sink, _ in sink }
    ) {
        self.settings = settings
        self.makeRegistry = registry
        self.plugins = plugins
        self.environment = environment
        self.events = events
    }

    /// The runner of `submitted`, writing to `store`; a workflow this worker cannot run (a plugin or an environment
    /// variable it lacks, a stage type it does not know) is refused with the reason.
    public func runner(for submitted: SubmittedWorkflow, store: any StateStore) throws(WorkerError) -> Runner {
        let declared = WorkflowLoader.pluginPaths(in: submitted.document, file: URL(fileURLWithPath: submitted.file))
        let registry: StageRegistry
        do {
            registry = try makeRegistry(plugins + declared)
        } catch {
            throw WorkerError(message: "\(error)")
        }
        let workflow: Workflow
        do {
            workflow = try WorkflowLoader(registry: registry).load(
                data: submitted.document, file: submitted.file, varOverrides: submitted.vars)
        } catch {
            throw WorkerError(message: error.diagnostics.map(\.description).joined(separator: "\n"))
        }
        let missing = workflow.missingEnvironment(in: environment)
        guard missing.isEmpty else {
            throw WorkerError(
                message:
                    "the workflow needs these environment variables, which are not set on this worker: \(missing.joined(separator: ", "))"
            )
        }
        var settings = self.settings
        settings.sink = events(settings.sink, workflow.name)
        return settings.runner(workflow: workflow, registry: registry, store: store, environment: environment)
    }

    /// ``runner(for:store:)``, as a ``Worker`` asks for it.
    public var factory: RunnerFactory {
        { submitted, store in try runner(for: submitted, store: store) }
    }
}
