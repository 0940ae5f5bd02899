import ArgumentParser
import Foundation
import PipelineKit
import PluginHost
import SharedBatch

import struct StageKit.InputItem
import enum StageKit.JSONValue
import struct StageKit.OptionSchema
import enum StageKit.OptionType

/// `pipeline status [WORKFLOW]`: what the ledger says about each workflow's items and their stages; given
/// the workflow file, also the files of its inputs that no run has taken up yet.
struct StatusCommand: StageCatalogCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the ledger: a table per workflow with each item's status and stages.")

    @Argument(help: "A workflow file: show only it, with the files of its inputs that have not run yet.")
    var workflow: String?

    @OptionGroup var stateOptions: StateOptions

    @OptionGroup var pluginOptions: PluginOptions

    @Flag(name: .long, help: "Show only the items that failed.")
    var failed = false

    @Flag(name: .long, help: "Print the state as JSON.")
    var json = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Show a batch that workers share through this PostgreSQL database (with its workers and queue) instead of the state folder.",
            valueName: "URL"))
    var db: String?

    func run(stages catalog: StageCatalog) async throws {
        try await SharedBatchOptions.using(db, opening: .existingBatch) { database in
            try await show(database: database, catalog: catalog)
        }
    }

    /// A workflow's run record, its items in the ledger, (given the workflow file) the files not run yet, and
    /// which stages wait for which.
    private typealias Section = (
        record: RunRecord, items: [LedgerItem], pending: [PlannedItem], graph: StageGraph?, streams: [String: String]
    )

    /// Shows the ledger of the state folder, or with `database`, the shared batch's workers, queues and ledger.
    private func show(database: BatchDatabase?, catalog: StageCatalog) async throws {
        var batch: BatchStatus?
        let store: (any StateStore)?
        if let database {
            batch = try await BatchReport.status(of: BatchQueue(database: database))
            store = PostgresStore(database: database)
        } else {
            store = try StateFolder.openForReading(stateOptions.state)?.ledger
        }
        if let batch, !json { BatchReport.print(batch) }
        var sections = try await self.sections(of: store, catalog: catalog)
        // `--failed` over the whole ledger shows the workflows that have failed items, not an empty table for
        // every other one.
        if failed, workflow == nil { sections.removeAll { !$0.items.contains { $0.status == .failed } } }
        guard !sections.isEmpty else {
            if json {
                Output.line(batch.map { BatchReport.json($0, workflows: []).serialized(pretty: true) } ?? "[]")
            } else {
                Output.line("no \(failed ? "failed items" : "runs") in \(store?.location ?? stateOptions.state)")
            }
            return
        }
        var report: [JSONValue] = []
        for section in sections {
            let checkpoints = try await CommandFailure.mappingErrors {
                try await store?.checkpoints(workflow: section.record.workflow, items: nil) ?? [:]
            }
            report.append(show(section, checkpoints: checkpoints))
        }
        if json {
            let document = batch.map { BatchReport.json($0, workflows: report) } ?? .array(report)
            Output.line(document.serialized(pretty: true))
        }
    }

    /// The workflow given on the command line, or every workflow the ledger knows.
    private func sections(of store: (any StateStore)?, catalog: StageCatalog) async throws -> [Section] {
        do {
            let known = try await store?.workflows() ?? []
            guard let path = workflow else {
                var sections: [Section] = []
                for record in known {
                    sections.append(
                        (record, try await store?.snapshot(workflow: record.workflow).items ?? [], [], nil, [:]))
                }
                return sections
            }
            let (workflow, registry) = try WorkflowFile.load(path, catalog: catalog, plugins: pluginOptions.paths)
            let discovery = try BatchInputs.discover(workflow, inputs: [], file: path, state: stateOptions.state)
            let plan = try await BatchInputs.plan(
                workflow, registry: registry, discovery: discovery, ledger: store, claims: false)
            let items = try await store?.snapshot(workflow: workflow.name).items ?? []
            let record =
                known.first { $0.workflow == workflow.name }
                ?? RunRecord(workflow: workflow.name, file: path, stages: workflow.stages.map(\.id))
            // Which upload streams which export (`"stream": true`).
            let streams = Dictionary(
                workflow.streaming.follows.map { (workflow.stages[$0.key].id, workflow.stages[$0.value].id) },
                uniquingKeysWith: { first, _ in first })
            return [(record, items, plan.items.filter { $0.itemID == nil }, workflow.graph, streams)]
        } catch let error as StateError {
            throw CommandFailure.failed(error)
        }
    }

    /// Prints a workflow's table (unless `--json`) and returns its JSON.
    private func show(_ section: Section, checkpoints: [Int64: [String: StageRecord]]) -> JSONValue {
        let items = section.items.filter { !failed || $0.status == .failed }
        let pending = failed ? [] : section.pending
        let stageIDs = section.record.stages
        var entries: [JSONValue] = items.map { item in
            let stages = checkpoints[item.id] ?? [:]
            return [
                "item": .int(Int(item.id)), "path": .string(item.input.path), "version": .int(item.version),
                "fingerprint": .string(item.fingerprint), "status": .string(item.status.rawValue),
                "error": item.error.map { .string($0.message) } ?? .null,
                "errorKind": item.error.map { .string($0.kind.rawValue) } ?? .null,
                "stages": .object(stages.mapValues { (try? JSONValue(encoding: $0)) ?? .null }),
            ]
        }
        entries += pending.map { planned in
            ["item": .null, "path": .string(planned.input.path), "status": .string(Self.pendingStatus(planned))]
        }
        var fields: [String: JSONValue] = [
            "workflow": .string(section.record.workflow), "file": .string(section.record.file),
            "items": .array(entries),
        ]
        if let graph = section.graph {
            // Which stages each stage waits for: the branches of the workflow's items.
            fields["after"] = .object(
                Dictionary(
                    graph.ids.indices.map {
                        (graph.ids[$0], JSONValue.array(graph.waitIDs(of: $0).map(JSONValue.string)))
                    },
                    uniquingKeysWith: { first, _ in first }))
        }
        if !section.streams.isEmpty { fields["streams"] = .object(section.streams.mapValues(JSONValue.string)) }
        let document = JSONValue.object(fields)
        guard !json else { return document }
        let count = items.count + pending.count
        Output.line("\(section.record.workflow) (\(section.record.file)): \(count) item\(count == 1 ? "" : "s")")
        if let graph = section.graph, graph.isBranched { Output.line("stages: \(graph.summary)") }
        for (upload, export) in section.streams.sorted(by: { $0.key < $1.key }) {
            Output.line("streaming: \(upload) uploads \(export) as it is written")
        }
        var rows = items.map { item in
            [item.input.relativePath, Self.status(item)]
                + stageIDs.map { id in
                    checkpoints[item.id]?[id].map(Self.cell) ?? "-"
                }
        }
        rows += pending.map { [$0.input.relativePath, Self.pendingStatus($0)] + stageIDs.map { _ in "-" } }
        // Names, and reasons that quote them, one row per item.
        rows = rows.map { $0.map(Output.shown) }
        Output.line(Self.table(header: ["ITEM", "STATUS"] + stageIDs, rows: rows))
        for item in items where item.status == .failed {
            Output.line("  \(Output.shown(item.input.relativePath)): \(Output.shown(item.error?.message ?? "failed"))")
        }
        for (item, id) in items.flatMap({ item in stageIDs.map { (item, $0) } }) {
            guard let quality = QualitySummary.line(checkpoints[item.id]?[id]?.outputs) else { continue }
            Output.line(
                "  \(Output.shown(item.input.relativePath)): \(Output.shown(id)) quality \(Output.shown(quality))")
        }
        return document
    }

    private static func status(_ item: LedgerItem) -> String {
        let version = item.version > 1 ? " (v\(item.version))" : ""
        switch item.status {
        case .succeeded: return "done" + version
        case .failed: return "FAILED" + version + (item.error.map { " (\($0.kind))" } ?? "")
        default: return item.status.rawValue + version
        }
    }

    private static func pendingStatus(_ planned: PlannedItem) -> String {
        if case .skip(let reason) = planned.action { return "skipped: \(reason)" }
        return "not run yet"
    }

    private static func cell(_ record: StageRecord) -> String {
        switch record.status {
        case .succeeded: "done"
        case .skipped: record.reason.map { "skipped (\($0))" } ?? "skipped"
        case .running: "running (\(record.attempts))"
        case .interrupted: "interrupted"
        case .failed: "FAILED (\(record.attempts)\(record.errorKind.map { ", \($0)" } ?? ""))"
        }
    }

    static func table(header: [String], rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in
            all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        return all.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padded(to: widths[index] + 2)
            }.joined()
        }.joined(separator: "\n")
    }
}

/// `pipeline stages`: the registered stage types, their options and outputs.
struct StagesCommand: StageCatalogCommand {
    static let configuration = CommandConfiguration(
        commandName: "stages", abstract: "List the stage types with their options and outputs.")

    @Flag(name: .long, help: "Print the list as JSON.")
    var json = false

    @Flag(name: .long, help: "Print the reference as Markdown (docs/stages.md is this, for the built-in stages).")
    var markdown = false

    @OptionGroup var pluginOptions: PluginOptions

    func run(stages catalog: StageCatalog) async throws {
        let descriptors = try catalog.commandRegistry(plugins: pluginOptions.paths).all
        if markdown {
            Output.write(StageReference.markdown(descriptors))
            return
        }
        if json {
            let list: [JSONValue] = descriptors.map { descriptor in
                [
                    "type": .string(descriptor.stageType), "summary": .string(descriptor.summary),
                    "source": .string(descriptor.source.description),
                    "options": Self.json(descriptor.optionSchema),
                    "outputs": .array(
                        descriptor.outputSchema.fields.map {
                            ["name": .string($0.name), "summary": .string($0.summary)]
                        }),
                ]
            }
            Output.line(JSONValue.array(list).serialized(pretty: true))
            return
        }
        for descriptor in descriptors {
            Output.line("\(descriptor.stageType)  [\(descriptor.source)]")
            Output.line("  \(descriptor.summary)")
            if !descriptor.optionSchema.fields.isEmpty { Output.line("  options:") }
            Self.list(descriptor.optionSchema, indent: "    ")
            if descriptor.optionSchema.additionalFields != nil { Output.line("    (any option name)") }
            let outputs = descriptor.outputSchema
            if !outputs.fields.isEmpty || outputs.isOpen {
                Output.line(
                    "  outputs: "
                        + (outputs.fields.map(\.name) + (outputs.isOpen ? ["(as given in with)"] : [])).joined(
                            separator: ", "))
            }
            Output.line("")
        }
    }

    /// The options of an object of options (a nested one too, such as `video` or each of `renditions`), each with
    /// its bounds and, nested, the options inside it.
    private static func json(_ schema: OptionSchema) -> JSONValue {
        .array(
            schema.fields.map { field in
                var entry: [String: JSONValue] = [
                    "name": .string(field.name), "type": .string(field.type.displayName),
                    "required": .bool(field.isRequired),
                    "default": field.defaultValue ?? .null, "summary": .string(field.summary),
                    "minimum": field.minimum.map(JSONValue.init(bound:)) ?? .null,
                    "maximum": field.maximum.map(JSONValue.init(bound:)) ?? .null,
                    "exclusiveMinimum": field.exclusiveMinimum.map(JSONValue.init(bound:)) ?? .null,
                    "minimumCount": field.minimumCount.map(JSONValue.int) ?? .null,
                ]
                if let nested = field.type.nestedOptions { entry["options"] = json(nested) }
                return .object(entry)
            })
    }

    /// Prints an object's options, one a line, with the options nested in each below it, indented.
    private static func list(_ schema: OptionSchema, indent: String) {
        for field in schema.fields {
            var line = "\(indent)\(field.name): \(field.type.displayName)"
            if let bounds = field.boundsDescription { line += " \(bounds)" }
            if field.isRequired { line += " (required)" }
            if let value = field.defaultValue { line += " = \(value.serialized())" }
            Output.line(line + " — \(field.summary)")
            if let nested = field.type.nestedOptions { list(nested, indent: indent + "  ") }
        }
    }
}

extension OptionType {
    /// The options inside an option that is an object of options, or an array of them.
    fileprivate var nestedOptions: OptionSchema? {
        switch self {
        case .object(let schema): schema
        case .array(.object(let schema)): schema
        default: nil
        }
    }
}
