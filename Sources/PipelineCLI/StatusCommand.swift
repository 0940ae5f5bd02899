import ArgumentParser
import Foundation
import PipelineKit

import struct StageKit.InputItem
import enum StageKit.JSONValue

/// `pipeline status`: what the state folder says about each run, item and stage.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the checkpoints of every run in the state folder: a table per item and stage.")

    @OptionGroup var stateOptions: StateOptions

    @Flag(name: .long, help: "Print the state as JSON.")
    var json = false

    func run() async throws {
        let store = CheckpointStore(folder: URL(fileURLWithPath: stateOptions.state))
        let runs = store.runs()
        guard !runs.isEmpty else {
            if json { Output.line("[]") } else { Output.line("no runs in \(stateOptions.state)") }
            return
        }
        var problems: [String] = []
        var report: [JSONValue] = []
        for run in runs {
            let record = try? await store.run(run)
            var items: [JSONValue] = []
            var rows: [[String]] = []
            var stageIDs = record?.stages ?? []
            for item in store.items(run: run) {
                var stages: [String: JSONValue] = [:]
                var cells: [String: String] = [:]
                for stage in store.stages(run: run, item: item) {
                    if !stageIDs.contains(stage) { stageIDs.append(stage) }
                    do {
                        guard let checkpoint = try await store.stage(run: run, item: item, stage: stage) else {
                            continue
                        }
                        stages[stage] = try JSONValue(encoding: checkpoint)
                        cells[stage] = Self.cell(checkpoint)
                    } catch {
                        problems.append("\(error)")
                        stages[stage] = ["status": "damaged", "error": .string("\(error)")]
                        cells[stage] = "DAMAGED"
                    }
                }
                let input = (try? await store.item(run: run, item: item))?.input
                let name = input?.relativePath ?? item
                items.append(["item": .string(name), "key": .string(item), "stages": .object(stages)])
                rows.append([name] + stageIDs.map { cells[$0] ?? "-" })
            }
            report.append(["run": .string(run), "workflow": .string(record?.file ?? ""), "items": .array(items)])
            if !json {
                Output.line(
                    "\(run)\(record.map { " (\($0.file))" } ?? ""): \(rows.count) item\(rows.count == 1 ? "" : "s")")
                Output.line(
                    Self.table(
                        header: ["ITEM"] + stageIDs,
                        rows: rows.map { $0 + Array(repeating: "-", count: max(0, stageIDs.count + 1 - $0.count)) }))
            }
        }
        if json { Output.line(JSONValue.array(report).serialized(pretty: true)) }
        for problem in problems { Output.error(problem) }
        if !problems.isEmpty { throw ExitCode(1) }
    }

    private static func cell(_ record: StageRecord) -> String {
        switch record.status {
        case .succeeded: "done"
        case .skipped: "skipped"
        case .running: "running (\(record.attempts))"
        case .interrupted: "interrupted"
        case .failed: "FAILED (\(record.attempts)\(record.errorKind.map { ", \($0)" } ?? ""))"
        }
    }

    private static func table(header: [String], rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in
            all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        return all.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index] + 2, withPad: " ", startingAt: 0)
            }.joined()
        }.joined(separator: "\n")
    }
}

/// `pipeline stages`: the registered stage types, their options and outputs.
struct StagesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stages", abstract: "List the stage types with their options and outputs.")

    @Flag(name: .long, help: "Print the list as JSON.")
    var json = false

    @OptionGroup var pluginOptions: PluginOptions

    func run() async throws {
        let descriptors = try StageCatalog.registry(plugins: pluginOptions.paths).all
        if json {
            let list: [JSONValue] = descriptors.map { descriptor in
                [
                    "type": .string(descriptor.stageType), "summary": .string(descriptor.summary),
                    "source": .string(descriptor.source.description),
                    "options": .array(
                        descriptor.optionSchema.fields.map { field in
                            [
                                "name": .string(field.name), "type": .string(field.type.displayName),
                                "required": .bool(field.isRequired),
                                "default": field.defaultValue ?? .null, "summary": .string(field.summary),
                            ]
                        }),
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
            for field in descriptor.optionSchema.fields {
                var line = "    \(field.name): \(field.type.displayName)"
                if field.isRequired { line += " (required)" }
                if let value = field.defaultValue { line += " = \(value.serialized())" }
                Output.line(line + " — \(field.summary)")
            }
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
}
