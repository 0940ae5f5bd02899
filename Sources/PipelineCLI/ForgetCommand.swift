import ArgumentParser
import Foundation
import PipelineKit
import PluginHost
import SharedBatch

import struct StageKit.InputItem

/// `pipeline forget WORKFLOW ITEM...|--failed`: removes items from the ledger, so the next run treats their
/// files as new. Nothing remote is undone (that is `pipeline cancel`).
struct ForgetCommand: StageCatalogCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Remove items from the ledger: the next run processes their files as new ones.")

    @Argument(help: "The workflow file.")
    var workflow: String

    @Argument(help: "Items to forget: item number, path, relative path or file name.")
    var items: [String] = []

    @Flag(name: .long, help: "Forget every item that failed.")
    var failed = false

    @Flag(name: .long, help: "Do not ask for confirmation.")
    var yes = false

    @OptionGroup var stateOptions: StateOptions

    @OptionGroup var pluginOptions: PluginOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Forget items of a batch that workers share through this PostgreSQL database (a worker running one drops it).",
            valueName: "URL"))
    var db: String?

    func validate() throws {
        if items.isEmpty == !failed { throw ValidationError("give the items to forget, or --failed") }
    }

    func run(stages catalog: StageCatalog) async throws {
        try await SharedBatchOptions.using(db, opening: .existingBatch) { database in
            try await forget(database: database, catalog: catalog)
        }
    }

    /// Forgets items of the state folder's ledger, or with `database`, of the shared batch's.
    private func forget(database: BatchDatabase?, catalog: StageCatalog) async throws {
        let (workflow, _) = try WorkflowFile.load(self.workflow, catalog: catalog, plugins: pluginOptions.paths)
        let state = database == nil ? try StateFolder.openForWriting(stateOptions.state, fresh: false) : nil
        defer { state?.close() }
        guard let store: any StateStore = database.map({ PostgresStore(database: $0) }) ?? state?.ledger else { return }
        let snapshot: LedgerSnapshot
        do {
            snapshot = try await store.snapshot(workflow: workflow.name)
        } catch {
            throw CommandFailure.failed(error)
        }
        let chosen =
            failed
            ? snapshot.items.filter { $0.status == .failed }
            : try ItemSelection.select(items, in: snapshot, workflow: workflow.name)
        guard !chosen.isEmpty else {
            Output.line("no failed items in the ledger of \(workflow.name)")
            return
        }
        for item in chosen { Output.line("\(item.id)  \(item.input.path)  (\(item.status.rawValue))") }
        if !yes {
            guard Output.isTerminal else {
                throw CommandFailure(
                    .invalid,
                    "pipeline: forgetting \(chosen.count) item(s) needs --yes when the input is not a terminal")
            }
            Output.write("forget \(chosen.count) item\(chosen.count == 1 ? "" : "s")? [y/N] ")
            guard let answer = readLine(), answer.lowercased().hasPrefix("y") else { throw CommandFailure(.failed) }
        }
        do {
            try await store.forget(items: chosen.map(\.id))
            state?.removeScratch(of: chosen.map(\.id))
        } catch {
            throw CommandFailure.failed(error)
        }
        Output.line("forgot \(chosen.count) item\(chosen.count == 1 ? "" : "s")")
    }
}
