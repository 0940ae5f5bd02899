import ArgumentParser
import Foundation
import PipelineKit
import PluginHost

import struct StageKit.InputItem
import enum StageKit.JSONValue
import struct StageKit.StageFailure

/// `pipeline plan WORKFLOW`: what the next `run` would do with each file and stage, and why. Writes nothing,
/// contacts no server.
struct PlanCommand: StageCatalogCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show what the next run would do with each file and stage, and why; writes nothing.")

    @Argument(help: "The workflow file.")
    var workflow: String

    @OptionGroup var inputOptions: InputOptions

    @OptionGroup var varOptions: VarOptions

    @OptionGroup var stateOptions: StateOptions

    @OptionGroup var pluginOptions: PluginOptions

    @OptionGroup var rerunOptions: RerunOptions

    @Flag(name: .long, help: "Print the plan as JSON.")
    var json = false

    func run(stages catalog: StageCatalog) async throws {
        let (workflow, registry) = try WorkflowFile.load(
            self.workflow, catalog: catalog, plugins: pluginOptions.paths, varOverrides: try varOptions.overrides())
        let environment = ProcessInfo.processInfo.environment
        let discovery = try BatchInputs.discover(
            workflow, inputs: inputOptions.input, file: self.workflow, state: stateOptions.state)
        let state = try StateFolder.openForReading(stateOptions.state)
        let plan = try await BatchInputs.plan(
            workflow, registry: registry, discovery: consume discovery, ledger: state?.ledger,
            reprocess: rerunOptions.reprocess, onlyFailed: rerunOptions.failed)
        let checkpoints: [Int64: [String: StageRecord]]
        let previous: [Int64: [String: JSONValue]]
        do {
            // Only the items whose stages would run are looked at stage by stage.
            let running = Set(plan.runnable.compactMap { $0.known?.id })
            checkpoints = try await state?.ledger.checkpoints(workflow: workflow.name, items: running) ?? [:]
            previous = try await state?.ledger.previousOutputs(workflow: workflow.name, items: running) ?? [:]
        } catch {
            throw CommandFailure.failed(error)
        }
        let redactor = SecretRedactor(names: workflow.environmentNames, environment: environment)
        let decisions = StageDecisions(workflow: workflow, redactor: redactor, environment: environment)
        var report = PlanReport(json: json, branched: workflow.graph.isBranched, redactor: redactor)
        var (described, undescribed) = (0, 0)
        for planned in plan.items {
            // A damaged file's item, and one refused for writing another's file, fail before their stages run.
            guard planned.damage == nil, planned.collision == nil else {
                report.add(planned, stages: [])
                continue
            }
            let records = planned.known.flatMap { checkpoints[$0.id] } ?? [:]
            var stages = decisions.preview(
                planned, checkpoints: records, previous: planned.known.flatMap { previous[$0.id] } ?? [:])
            if stages.contains(where: { $0.action == .run && registry.descriptor(for: $0.uses)?.describesPlan == true })
            {
                if described < Self.describedFiles {
                    described += 1
                    await registry.describe(&stages, of: planned, checkpoints: records)
                } else {
                    undescribed += 1
                }
            }
            report.add(planned, stages: stages)
        }
        report.undescribed = undescribed
        for passed in plan.passedOver { report.add(passed) }
        report.finish(workflow: workflow.name)
    }

    /// The files whose stages say how they would run (``StageRegistry/describe(_:of:checkpoints:)``): saying it
    /// reads each file's header, a few milliseconds each.
    static let describedFiles = 1000

    /// The plan word for an item, and why.
    static func describe(_ planned: PlannedItem) -> (String, String?) {
        if let damage = planned.damage { return ("damaged", StageFailure.damagedInput(damage).message) }
        if let collision = planned.collision { return ("refused", collision.failure.message) }
        switch planned.action {
        case .run(let reason):
            switch reason {
            case .new: return ("new", nil)
            case .changed: return ("changed", reason.description)
            case .resume, .workflowChanged, .reprocess:
                let renamed = planned.known.map { $0.input.path != planned.input.path } ?? false
                let from = renamed ? "; renamed from \(planned.known?.input.path ?? "")" : ""
                return ("run", reason.description + from)
            }
        case .reuse:
            let renamed = planned.known.map { $0.input.path != planned.input.path } ?? false
            return renamed ? ("renamed", "from \(planned.known?.input.path ?? ""), done") : ("done", nil)
        case .skip(let reason):
            return ("skip", reason.description)
        }
    }
}

/// `pipeline plan`'s output: a line per file and stage as the plan is read, or one JSON document at the end;
/// either way, the totals by plan word.
private struct PlanReport {
    let json: Bool
    /// Whether the workflow has branches: then each stage line says what it waits for.
    let branched: Bool
    private var records: [JSONValue] = []
    private var counts: [String: Int] = [:]
    /// Files that run whose stages would say how, left undescribed (beyond ``PlanCommand/describedFiles``).
    var undescribed = 0
    private var out = BufferedLines()

    /// Hides the values of the workflow's `env` (a refused item's path may hold one).
    let redactor: SecretRedactor

    init(json: Bool, branched: Bool, redactor: SecretRedactor) {
        self.json = json
        self.branched = branched
        self.redactor = redactor
    }

    /// A file of the batch and what its stages would do.
    mutating func add(_ planned: PlannedItem, stages: [StagePreview]) {
        let (kind, described) = PlanCommand.describe(planned)
        let reason = described.map { redactor.redact($0) }
        counts[kind, default: 0] += 1
        guard json else {
            out.line(
                "\(kind.padded(to: 8)) \(Output.shown(planned.input.relativePath))"
                    + (reason.map { "  (\(Output.shown($0)))" } ?? "")
            )
            for stage in stages {
                var notes: [String] = []
                if branched {
                    notes.append("after \(stage.after.isEmpty ? "nothing" : stage.after.joined(separator: ", "))")
                }
                if let export = stage.streams { notes.append("streaming \(export) as it is written") }
                if let note = stage.note { notes.append(note) }
                let after = notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))"
                out.line(
                    "           \(stage.action.rawValue.padded(to: 6)) \(stage.stage)\(after)"
                        + (stage.reason.map { ": \($0)" } ?? ""))
            }
            return
        }
        records.append([
            "path": .string(planned.input.path), "plan": .string(kind),
            "reason": reason.map(JSONValue.string) ?? .null,
            "fingerprint": planned.fingerprint.map(JSONValue.string) ?? .null,
            "item": planned.itemID.map { .int(Int($0)) } ?? .null,
            "stages": .array(
                stages.map { stage in
                    [
                        "stage": .string(stage.stage), "uses": .string(stage.uses),
                        "action": .string(stage.action.rawValue),
                        "reason": stage.reason.map(JSONValue.string) ?? .null,
                        "options": stage.options ?? .null, "after": .array(stage.after.map(JSONValue.string)),
                        "streams": stage.streams.map(JSONValue.string) ?? .null,
                        "note": stage.note.map(JSONValue.string) ?? .null,
                    ]
                }),
        ])
    }

    /// A file the input selection left out.
    mutating func add(_ passed: PassedOver) {
        counts["skip", default: 0] += 1
        records.append([
            "path": .string(passed.path), "plan": "skip", "reason": .string(passed.reason.description), "stages": [],
        ])
        if !json { out.line("skip     \(Output.shown(passed.path))  (\(Output.shown(passed.reason.description)))") }
    }

    /// Prints what is left: the lines not yet written and the totals, or the JSON document.
    mutating func finish(workflow: String) {
        out.flush()
        if json {
            Output.line(
                redactor.redact(
                    JSONValue.object([
                        "workflow": .string(workflow), "items": .array(records), "undescribed": .int(undescribed),
                    ])
                )
                .serialized(pretty: true))
            return
        }
        if undescribed > 0 {
            out.line(
                "(what stages would do is said for the first \(PlanCommand.describedFiles) files that run, not the "
                    + "other \(undescribed): saying it reads each file)")
            out.flush()
        }
        let files = counts.values.reduce(0, +)
        let totals = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        Output.line("\(workflow): \(files) files: \(totals.isEmpty ? "nothing" : totals)")
    }
}
