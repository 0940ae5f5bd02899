import ArgumentParser
import Foundation
import Logging
import PipelineKit

import struct StageKit.InputItem
import enum StageKit.JSONValue

/// `pipeline cancel WORKFLOW ITEM...`: undoes items' remote side effects with the workflow's `onCancel`
/// stages (delete the video, terminate the upload) and forgets their state.
struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Run the workflow's onCancel stages for items (e.g. delete their videos) and forget their state.")

    @Argument(help: "The workflow file.")
    var workflow: String

    @Argument(help: "Items to cancel, by relative path or file name (as `pipeline status` shows them).")
    var items: [String]

    @OptionGroup var stateOptions: StateOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var varOptions: VarOptions

    @Flag(name: .long, help: "Print events as JSON lines.")
    var json = false

    func run() async throws {
        let (workflow, registry) = try WorkflowFile.load(
            self.workflow, plugins: pluginOptions.paths, varOverrides: try varOptions.overrides())
        guard !workflow.onCancel.isEmpty else {
            Output.error("\(self.workflow): the workflow has no onCancel stages: there is nothing to run for a cancel")
            throw ExitCode(2)
        }
        let environment = try WorkflowFile.environment(for: workflow, file: self.workflow)
        let (lock, store) = try WorkflowFile.openState(stateOptions.state, for: workflow, environment: environment)
        var known: [InputItem] = []
        for key in store.items(run: workflow.name) {
            if let input = try? await store.item(run: workflow.name, item: key)?.input { known.append(input) }
        }
        var selected: [InputItem] = []
        for name in items {
            guard let item = known.first(where: { $0.relativePath == name || $0.name == name || $0.stateKey == name })
            else {
                Output.error(
                    "pipeline: no item \(name) in the state of \(workflow.name)"
                        + Suggestion.phrase(for: name, among: known.map(\.relativePath)))
                throw ExitCode(2)
            }
            selected.append(item)
        }
        let sink: any RunEventSink = json ? JSONLinesRenderer() : HumanRenderer(live: false)
        let runner = Runner(workflow: workflow, registry: registry, store: store, environment: environment, sink: sink)
        let chosen = selected
        let summary = await SignalHandling.cancellingOnSignal { await runner.cancel(items: chosen) }
        withExtendedLifetime(lock) {}
        if summary.interrupted { throw ExitCode(130) }
        if summary.failed > 0 { throw ExitCode(1) }
    }
}
