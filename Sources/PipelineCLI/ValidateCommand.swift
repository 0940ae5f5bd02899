import ArgumentParser
import Foundation
import PipelineKit
import PluginHost

import enum StageKit.JSONValue

/// `pipeline validate WORKFLOW`: checks a workflow without running anything.
struct ValidateCommand: StageCatalogCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a workflow and report every problem as file:line:column: path: message.")

    @Argument(help: "The workflow file.")
    var workflow: String

    @OptionGroup var pluginOptions: PluginOptions

    func run(stages catalog: StageCatalog) async throws {
        let (loaded, _) = try WorkflowFile.load(workflow, catalog: catalog, plugins: pluginOptions.paths)
        let missing = loaded.missingEnvironment(in: ProcessInfo.processInfo.environment)
        if !missing.isEmpty {
            Output.error(
                "\(workflow): note: these environment variables must be set when it runs: \(missing.joined(separator: ", "))"
            )
        }
        Output.line(
            "\(workflow): valid (\(loaded.stages.count) stage\(loaded.stages.count == 1 ? "" : "s"): \(loaded.graph.summary))"
        )
    }
}

/// `pipeline schema`: prints the JSON Schema of workflows, with the options of every registered stage.
struct SchemaCommand: StageCatalogCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the JSON Schema of workflow files (Workflows/workflow.schema.json is this output).")

    @OptionGroup var pluginOptions: PluginOptions

    func run(stages catalog: StageCatalog) async throws {
        Output.line(
            WorkflowSchema.generate(registry: try catalog.commandRegistry(plugins: pluginOptions.paths)).serialized(
                pretty: true))
    }
}
