import ArgumentParser
import Foundation
import PipelineKit
import PluginHost
import SharedBatch

/// `pipeline submit WORKFLOW --db URL`: queues a workflow's items for the workers that share the database.
/// Items are identified by content, as in the ledger: a file already queued or done is not queued again, and
/// submitting the same folder twice queues nothing new.
struct SubmitCommand: StageCatalogCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Queue a workflow's input files for the workers that share a PostgreSQL database.")

    @Argument(help: "The workflow file.")
    var workflow: String

    @OptionGroup var batch: SharedBatchOptions

    @OptionGroup var inputOptions: InputOptions

    @OptionGroup var varOptions: VarOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var rerunOptions: RerunOptions

    func run(stages catalog: StageCatalog) async throws {
        let overrides = try varOptions.overrides()
        let (workflow, registry) = try WorkflowFile.load(
            self.workflow, catalog: catalog, plugins: pluginOptions.paths, varOverrides: overrides)
        let file = URL(fileURLWithPath: self.workflow).standardizedFileURL
        let discovery = try BatchInputs.discover(
            workflow, inputs: inputOptions.input.map(Self.absolute), file: self.workflow, state: ".pipeline")
        try await SharedBatchOptions.using(batch.db, opening: .creatingBatch) { database in
            guard let database else { return }
            try await submit(
                workflow, registry: registry, discovery: discovery, file: file, overrides: overrides, to: database)
        }
    }

    /// Plans the batch against the database's ledger and queues what is to run.
    private func submit(
        _ workflow: Workflow, registry: StageRegistry, discovery: consuming Discovery, file: URL,
        overrides: [String: String], to database: BatchDatabase
    ) async throws {
        let store = PostgresStore(database: database)
        let plan = try await BatchInputs.plan(
            workflow, registry: registry, discovery: consume discovery, ledger: store,
            reprocess: rerunOptions.reprocess, onlyFailed: rerunOptions.failed)
        if let relative = plan.relativeDestination {
            throw CommandFailure(
                .invalid,
                "pipeline: \(file.path): \(relative), a relative path: each worker would take it from its own "
                    + "working folder, so one file could be written twice and claimed elsewhere; give an absolute "
                    + "path (for example \"${vars.out}/...\" with --var out=/shared/folder)")
        }
        let queue = BatchQueue(database: database)
        do {
            let document = try Data(contentsOf: file)
            let submitted = SubmittedWorkflow(
                name: workflow.name, file: file.path, document: document, vars: overrides, digest: workflow.digest,
                stages: workflow.stages.map(\.id))
            let redactor = SecretRedactor(
                names: workflow.environmentNames, environment: ProcessInfo.processInfo.environment)
            let summary = try await Submission(plan: plan, store: store, queue: queue, redactor: redactor).submit(
                submitted)
            Output.line(Self.describe(summary, workflow: workflow.name, database: database.location))
            if !workflow.notify.isEmpty {
                Output.error(
                    "pipeline: warning: \(file.path): workers do not read \"notify\" (it is for pipeline run); start them with --notify"
                )
            }
            if summary.damaged > 0 || summary.refused > 0 { throw CommandFailure(.failed) }
        } catch let error as StateError {
            throw CommandFailure.failed(error)
        }
    }

    /// The line that says what a submission did.
    private static func describe(_ summary: Submission.Summary, workflow: String, database: String) -> String {
        var parts = ["\(summary.done) done", "\(summary.alreadyQueued) already queued"]
        if summary.running > 0 {
            parts.append("\(summary.running) changed while a worker runs them (submit again later)")
        }
        if summary.skipped > 0 { parts.append("\(summary.skipped) skipped") }
        if summary.damaged > 0 {
            parts.append("\(summary.damaged) failed as damaged: FFmpeg cannot read them (pipeline status --failed)")
        }
        if summary.refused > 0 {
            parts.append(
                "\(summary.refused) refused: they would write a file another item writes (pipeline status --failed)")
        }
        let queued = summary.queued
        let head =
            queued == 0
            ? "\(workflow): nothing new to queue" : "\(workflow): queued \(queued) item\(queued == 1 ? "" : "s")"
        return "\(head) in \(database) (\(parts.joined(separator: ", ")))"
    }

    /// Paths as every worker sees them on a shared filesystem: absolute.
    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}
