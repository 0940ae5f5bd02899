import ArgumentParser
import Foundation
import PipelineKit
import SharedBatch

/// `pipeline submit WORKFLOW --db URL`: queues a workflow's items for the workers that share the database.
/// Items are identified by content, as in the ledger: a file already queued or done is not queued again, and
/// submitting the same folder twice queues nothing new.
struct SubmitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Queue a workflow's input files for the workers that share a PostgreSQL database.")

    @Argument(help: "The workflow file.")
    var workflow: String

    @OptionGroup var batch: SharedBatchOptions

    @OptionGroup var inputOptions: InputOptions

    @OptionGroup var varOptions: VarOptions

    @OptionGroup var pluginOptions: PluginOptions

    @Flag(name: .long, help: "Queue items that are done (or cancelled) again, as a new version.")
    var reprocess = false

    @Flag(name: .long, help: "Queue only the items that failed.")
    var failed = false

    func validate() throws {
        if reprocess && failed {
            throw ValidationError("--reprocess queues done items again and --failed only failed ones; give one of them")
        }
    }

    func run() async throws {
        let overrides = try varOptions.overrides()
        let (workflow, registry) = try WorkflowFile.load(
            self.workflow, plugins: pluginOptions.paths, varOverrides: overrides)
        let file = URL(fileURLWithPath: self.workflow).standardizedFileURL
        let discovery = try BatchInputs.discover(
            workflow, inputs: inputOptions.input.map(Self.absolute), file: self.workflow, state: ".pipeline")
        try await SharedBatchOptions.using(batch.db) { database in
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
        let plan = try await BatchInputs.planForRun(
            workflow, registry: registry, discovery: consume discovery, ledger: store, reprocess: reprocess,
            onlyFailed: failed)
        let queue = BatchQueue(database: database)
        do {
            let document = try Data(contentsOf: file)
            let submitted = SubmittedWorkflow(
                name: workflow.name, file: file.path, document: document, vars: overrides, digest: workflow.digest,
                stages: workflow.stages.map(\.id))
            let summary = try await Submission(plan: plan, store: store, queue: queue).submit(submitted)
            Output.line(summary.description(workflow: workflow.name, database: database.location))
        } catch let error as StateError {
            Output.error("pipeline: \(error)")
            throw ExitCode(1)
        }
    }

    /// Paths as every worker sees them on a shared filesystem: absolute.
    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}

/// Queues the runnable items of a plan: new items and new versions are admitted to the ledger, then queued with
/// the stored workflow; items already queued are left as they are, and a new version of an item a worker runs
/// right now waits for the next submit.
struct Submission {
    var plan: BatchPlan
    var store: PostgresStore
    var queue: BatchQueue

    /// What a submit did.
    struct Summary {
        var queued = 0
        var alreadyQueued = 0
        var running = 0
        var done = 0
        var skipped = 0

        func description(workflow: String, database: String) -> String {
            var parts = ["\(done) done", "\(alreadyQueued) already queued"]
            if running > 0 { parts.append("\(running) changed while a worker runs them (submit again later)") }
            if skipped > 0 { parts.append("\(skipped) skipped") }
            let head =
                queued == 0
                ? "\(workflow): nothing new to queue" : "\(workflow): queued \(queued) item\(queued == 1 ? "" : "s")"
            return "\(head) in \(database) (\(parts.joined(separator: ", ")))"
        }
    }

    func submit(_ workflow: SubmittedWorkflow) async throws(StateError) -> Summary {
        var summary = Summary()
        let runnable = plan.runnable
        let (queued, running) = try await queue.queueState(of: runnable.compactMap(\.known?.id))
        let id = try await queue.store(workflow)
        let run = try await store.beginRun(
            RunRecord(workflow: workflow.name, file: workflow.file, stages: workflow.stages),
            caching: plan.cacheEntries, sightings: [])
        var admitted: [Int64: String] = [:]
        for item in plan.items {
            switch item.action {
            case .reuse: summary.done += 1
            case .skip: summary.skipped += 1
            case .run(let reason):
                guard let admission = item.admission else {
                    summary.skipped += 1
                    continue
                }
                if let known = item.known?.id, queued.contains(known) {
                    if running.contains(known) && reason.newVersion {
                        summary.running += 1
                        continue
                    }
                    if !reason.newVersion {
                        summary.alreadyQueued += 1
                        continue
                    }
                }
                admitted[try await store.admit(admission, workflow: workflow.name).ref.item] = item.digest
            }
        }
        try await queue.enqueue(admitted, with: id)
        summary.queued = admitted.count
        try await store.recordPaths(plan.sightings)
        var totals = RunSummary(items: plan.items.count + plan.passedOver.count)
        totals.reused = summary.done
        totals.skipped = summary.skipped + plan.passedOver.count
        try await store.finishRun(run, summary: totals)
        return summary
    }
}
