import ArgumentParser
import AsyncHTTPClient
import Foundation
import HTTPTransport
import Logging
import PipelineKit
import PluginHost
import SharedBatch

import struct StageKit.InputItem
import struct StageKit.ServiceValues

/// `pipeline cancel WORKFLOW ITEM...`: undoes items' remote side effects with the workflow's `onCancel`
/// stages (delete the video, terminate the upload) and marks them cancelled: later runs leave them alone
/// until `--reprocess`.
struct CancelCommand: StageCatalogCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract:
            "Run the workflow's onCancel stages for items (e.g. delete their videos); later runs leave them alone.")

    @Argument(help: "The workflow file.")
    var workflow: String

    @Argument(help: "Items to cancel: item number, path, relative path or file name (as `pipeline status` shows them).")
    var items: [String]

    @OptionGroup var stateOptions: StateOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var varOptions: VarOptions

    @Flag(name: .long, help: "Print events as JSON lines.")
    var json = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Cancel items of a batch that workers share through this PostgreSQL database: a worker running one stops it and undoes it; the others are undone here.",
            valueName: "URL"))
    var db: String?

    func run(stages catalog: StageCatalog) async throws {
        let (workflow, registry) = try WorkflowFile.load(
            self.workflow, catalog: catalog, plugins: pluginOptions.paths, varOverrides: try varOptions.overrides())
        guard !workflow.onCancel.isEmpty else {
            throw CommandFailure(
                .invalid, "\(self.workflow): the workflow has no onCancel stages: there is nothing to run for a cancel")
        }
        let environment = try WorkflowFile.environment(for: workflow, file: self.workflow)
        if let db {
            return try await SharedBatchOptions.using(db, opening: .existingBatch) { database in
                guard let database else { return }
                try await cancelShared(in: database, workflow: workflow, registry: registry, environment: environment)
            }
        }
        let folder = URL(fileURLWithPath: stateOptions.state).standardizedFileURL
        if let holder = StateFolder.busyHolder(stateOptions.state) {
            return try await ask(holder, folder: folder, workflow: workflow)
        }
        let state = try StateFolder.openForWriting(stateOptions.state, fresh: false)
        defer { state.close() }
        let snapshot = try await state.snapshot(of: workflow)
        let selected = try ItemSelection.select(items, in: snapshot, workflow: workflow.name)
        let summary = await Self.undo(
            selected, workflow: workflow, registry: registry, store: state.ledger, scratchRoot: state.scratchRoot,
            environment: environment, json: json)
        if summary.interrupted { throw CommandFailure(.interrupted) }
        if summary.failed > 0 { throw CommandFailure(.failed) }
    }

    /// Cancels the items of a batch that workers share (``BatchCancel``): those a worker runs are undone by it, the
    /// others in this process.
    private func cancelShared(
        in database: BatchDatabase, workflow: Workflow, registry: StageRegistry, environment: [String: String]
    ) async throws {
        let cancel = BatchCancel(database: database, workflow: workflow.name)
        let (store, json) = (cancel.store, json)
        let outcome: BatchCancel.Outcome
        do {
            let selected = try ItemSelection.select(
                items, in: try await store.snapshot(workflow: workflow.name), workflow: workflow.name)
            outcome = try await cancel.cancel(selected) { undone in
                await Self.undo(
                    undone, workflow: workflow, registry: registry, store: store,
                    scratchRoot: FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-cancel"),
                    environment: environment, json: json)
            } report: { event in
                switch event {
                case .askedWorkers(let count):
                    Output.error("pipeline: \(count) item(s) are running on workers; asked them to stop and undo them")
                case .cancelledByWorker(let item):
                    Output.line("cancelled \(item.input.relativePath)")
                case .workerCouldNotUndo(let item):
                    Output.error("pipeline: the worker could not undo \(item.input.relativePath); see its output")
                }
            }
        } catch let error as StateError {
            throw CommandFailure.failed(error)
        }
        switch outcome {
        case .cancelled: return
        case .failed: throw CommandFailure(.failed)
        case .interrupted: throw CommandFailure(.interrupted)
        }
    }

    /// Runs the onCancel stages of `items` in this process and marks them cancelled.
    static func undo(
        _ items: [LedgerItem], workflow: Workflow, registry: StageRegistry, store: any StateStore, scratchRoot: URL,
        environment: [String: String], json: Bool
    ) async -> RunSummary {
        let sink: any RunEventSink = json ? JSONLinesRenderer() : HumanRenderer(live: false)
        let client = HTTPClient.makeForStages()
        var services = ServiceValues()
        services[HTTPClientKey.self] = client
        let runner = Runner(
            workflow: workflow, registry: registry, store: store,
            redactor: SecretRedactor(names: workflow.environmentNames, environment: environment),
            scratchRoot: scratchRoot, environment: environment, services: services, sink: sink)
        let summary = await SignalHandling.cancellingOnSignal { await runner.cancel(items: items) }
        try? await client.shutdown()
        return summary
    }

    /// While another process holds the state folder: leaves cancel requests in the ledger, signals the
    /// holder (which stops the items at their next checkpoint and runs their onCancel stages), and waits
    /// until they are cancelled or the holder ends.
    private func ask(_ holder: Int32, folder: URL, workflow: Workflow) async throws {
        do {
            let ledger = try SQLiteLedger(folder: folder)
            defer { try? ledger.close() }
            let selected = try ItemSelection.select(
                items, in: try await ledger.snapshot(workflow: workflow.name), workflow: workflow.name)
            let ids = Set(selected.map(\.id))
            try await ledger.requestCancel(of: Array(ids))
            kill(holder, SIGUSR1)
            Output.error(
                "pipeline: the state folder is in use by pid \(holder); asked it to cancel \(ids.count) item(s) at their next checkpoint and run their onCancel stages"
            )
            while true {
                let left = try await ledger.snapshot(workflow: workflow.name).items.filter {
                    ids.contains($0.id) && $0.status != .cancelled
                }
                if left.isEmpty { break }
                let pending = try await ledger.cancelRequests(workflow: workflow.name)
                let failed = left.filter { !pending.contains($0.id) }
                guard failed.isEmpty else {
                    throw CommandFailure(
                        .failed,
                        "pipeline: pid \(holder) could not undo \(failed.map(\.input.relativePath).joined(separator: ", ")); see its output"
                    )
                }
                guard kill(holder, 0) == 0 else {
                    throw CommandFailure(
                        .failed,
                        "pipeline: pid \(holder) ended before it cancelled \(left.map(\.input.relativePath).joined(separator: ", ")); run this command again"
                    )
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            for item in selected { Output.line("cancelled \(item.input.relativePath)") }
        } catch let error as StateError {
            throw CommandFailure.failed(error)
        }
    }
}
