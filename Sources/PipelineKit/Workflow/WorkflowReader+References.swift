import Foundation
import StageKit

/// The `${...}` references of vars and stages: each must name something that exists when it is resolved.
extension WorkflowReader {
    mutating func checkReferences(vars: [String: JSONValue], stages: [StageSpec], onCancel: [StageSpec]) {
        let varsPath = JSONPath.root.appending("vars")
        var varDependencies: [String: [String]] = [:]
        for (name, value) in vars {
            for (reference, path) in references(in: value, at: varsPath.appending(name)) {
                switch reference.root {
                case "vars":
                    if let member = reference.member { varDependencies[name, default: []].append(member) }
                    checkReference(reference, at: path, stage: nil, vars: vars, stages: stages + onCancel, graph: nil)
                case "input", "env":
                    checkReference(reference, at: path, stage: nil, vars: vars, stages: stages + onCancel, graph: nil)
                default:
                    log.error(
                        path,
                        "vars can reference input, vars and env only, not \"\(reference.root)\" (vars are resolved before any stage runs)"
                    )
                }
            }
        }
        reportVarCycles(varDependencies, vars: vars)

        let graph = StageGraph(stages)
        checkWaits(stages, onCancel: onCancel, graph: graph)
        let all = stages + onCancel
        for (index, stage) in all.enumerated() {
            // onCancel stages run after every stage, one after another.
            let waits = { (other: Int) in index < stages.count ? graph.waits(index, for: other) : other < index }
            if let refresher = stage.refreshWith {
                let target = all.firstIndex { $0.id == refresher }
                if let target, target < index, !waits(target) {
                    log.error(
                        stage.path.appending("refreshWith"),
                        "refreshWith names stage \"\(refresher)\", which stage \"\(stage.id)\" does not wait for; "
                            + Self.afterAdvice(adding: refresher, index: index, graph: graph))
                } else if target.map(waits) != true {
                    log.error(
                        stage.path.appending("refreshWith"),
                        "refreshWith must name an earlier stage, not \"\(refresher)\""
                            + Suggestion.phrase(for: refresher, among: all.prefix(index).map(\.id)))
                }
            }
            var found = references(in: stage.with, at: stage.path.appending("with"))
            if let condition = stage.condition {
                found += references(in: .string(condition), at: stage.path.appending("if"))
            }
            for (reference, path) in found {
                checkReference(
                    reference, at: path, stage: (index, waits), vars: vars, stages: all, graph: graph)
            }
        }
    }

    /// `after` must name stages of `stages` other than its own, without a cycle; onCancel stages take none.
    private mutating func checkWaits(_ stages: [StageSpec], onCancel: [StageSpec], graph: StageGraph) {
        let ids = stages.map(\.id)
        for stage in stages {
            for (position, name) in (stage.after ?? []).enumerated() {
                let path = stage.path.appending("after").appending(index: position)
                if name == stage.id {
                    log.error(path, "stage \"\(name)\" cannot wait for itself")
                } else if onCancel.contains(where: { $0.id == name }) {
                    log.error(path, "\"\(name)\" is an onCancel stage: stages cannot wait for it")
                } else if !ids.contains(name) {
                    log.error(
                        path,
                        "unknown stage \"\(name)\" in after: expected the id of a stage"
                            + Suggestion.phrase(for: name, among: ids))
                }
            }
        }
        if let cycle = graph.cycle {
            // A wait on the stage before is never part of a cycle: some stage on it has an `after`.
            let written = cycle.first { stages[$0].after != nil } ?? cycle[0]
            log.error(
                stages[written].path.appending("after"),
                "these stages wait for each other: " + cycle.map { graph.ids[$0] }.joined(separator: " → ")
                    + " (each waits for the next); remove one of these waits")
        }
        for stage in onCancel where stage.after != nil {
            log.error(
                stage.path.appending("after"),
                "onCancel stages take no after: they run one after another, once the item's stages have stopped")
        }
    }

    /// How to make stage `index` wait for `id` as well: the `after` to write.
    private static func afterAdvice(adding id: String, index: Int, graph: StageGraph) -> String {
        let current = index < graph.ids.count ? graph.waitIDs(of: index) : []
        let suggested = (current + [id]).map { "\"\($0)\"" }.joined(separator: ", ")
        return "add it to the stage's after: \"after\": [\(suggested)]"
    }

    /// Every reference in the templates of a value, with the path of its string; malformed templates are reported.
    mutating func references(in value: JSONValue, at path: JSONPath) -> [(Reference, JSONPath)] {
        switch value {
        case .string(let text):
            do {
                return try Template(parsing: text).expressions.flatMap(\.references).map { ($0, path) }
            } catch {
                log.error(path, "invalid expression in \(JSONValue.string(text).serialized()): \(error.message)")
                return []
            }
        case .array(let elements):
            return elements.enumerated().flatMap { index, element in
                references(in: element, at: path.appending(index: index))
            }
        case .object(let members):
            return members.sorted { $0.key < $1.key }.flatMap { key, member in
                references(in: member, at: path.appending(key))
            }
        default:
            return []
        }
    }

    /// Checks one reference; `stage` is the index of the stage that holds it, with whether that stage waits for
    /// another (nil for a var).
    private mutating func checkReference(
        _ reference: Reference, at path: JSONPath, stage: (index: Int, waits: (Int) -> Bool)?,
        vars: [String: JSONValue], stages: [StageSpec], graph: StageGraph?
    ) {
        switch reference.root {
        case "input":
            guard let member = reference.member else { return }
            if !InputItem.factNames.contains(member) {
                log.error(
                    path,
                    "unknown input fact \"\(member)\" in ${\(reference)}; known: \(InputItem.factNames.joined(separator: ", "))"
                        + Suggestion.phrase(for: member, among: InputItem.factNames))
            } else if reference.components.count > 1, member != "meta" {
                log.error(path, "${\(reference)}: input.\(member) has no members")
            }
        case "vars":
            guard let member = reference.member else {
                return log.error(path, "${vars} needs a name, e.g. ${vars.api}")
            }
            if vars[member] == nil {
                log.error(
                    path,
                    "unknown var \"\(member)\" in ${\(reference)}" + Suggestion.phrase(for: member, among: vars.keys))
            }
        case "env":
            if reference.member == nil { log.error(path, "${env} needs a variable name, e.g. ${env.HOME}") }
        case "previous":
            guard let member = reference.member else {
                return log.error(path, "${previous} needs a stage id, e.g. ${previous.ticket.uri}")
            }
            guard let target = stages.first(where: { $0.id == member }) else {
                return log.error(
                    path,
                    "${\(reference)}: the workflow has no stage \"\(member)\""
                        + Suggestion.phrase(for: member, among: stages.map(\.id)))
            }
            if reference.components.count > 1, case .key(let output) = reference.components[1] {
                checkOutput(output, of: target, at: path)
            }
        default:
            checkStageReference(reference, at: path, stage: stage, stages: stages, graph: graph)
        }
    }

    /// Checks a reference to the outputs of a stage (`${ticket.uri}`): the stage exists, is not the one that
    /// holds the reference, and runs before it (`stage`: as in ``checkReference(_:at:stage:vars:stages:graph:)``).
    private mutating func checkStageReference(
        _ reference: Reference, at path: JSONPath, stage: (index: Int, waits: (Int) -> Bool)?, stages: [StageSpec],
        graph: StageGraph?
    ) {
        let earlier = stage.map { Array(stages.prefix($0.index)) } ?? []
        guard let target = stages.firstIndex(where: { $0.id == reference.root }) else {
            let candidates = WorkflowLoader.reservedRoots + earlier.map(\.id)
            log.error(
                path,
                "unknown reference \"\(reference.root)\" in ${\(reference)}: expected input, vars, env or the id of an earlier stage"
                    + Suggestion.phrase(for: reference.root, among: candidates))
            return
        }
        guard let (stageIndex, waits) = stage, let graph else { return }
        if target == stageIndex {
            log.error(
                path,
                "stage \"\(reference.root)\" refers to its own output in ${\(reference)}: a stage can use only earlier stages"
            )
            return
        }
        if !waits(target) {
            let holder = stages[stageIndex]
            if target > stageIndex, holder.after == nil {
                log.error(
                    path,
                    "${\(reference)} refers to stage \"\(reference.root)\", which runs later; move it before this stage"
                )
            } else {
                log.error(
                    path,
                    "${\(reference)} refers to stage \"\(reference.root)\", which stage \"\(holder.id)\" does not wait for, "
                        + "so its outputs may not exist yet; "
                        + Self.afterAdvice(adding: reference.root, index: stageIndex, graph: graph))
            }
            return
        }
        if let member = reference.member { checkOutput(member, of: stages[target], at: path) }
    }

    /// A reference to an output of `stage`, now (`${ticket.uri}`) or of the previous version
    /// (`${previous.ticket.uri}`), must name one the stage's type has.
    private mutating func checkOutput(_ output: String, of stage: StageSpec, at path: JSONPath) {
        guard let descriptor = registry.descriptor(for: stage.uses) else { return }
        let outputs = descriptor.outputs(for: stage.with)
        if !outputs.contains(output) {
            let known = outputs.fields.map(\.name)
            log.error(
                path,
                "stage \"\(stage.id)\" (\(stage.uses)) has no output \"\(output)\"; it has \(known.joined(separator: ", "))"
                    + Suggestion.phrase(for: output, among: known))
        }
    }

    private mutating func reportVarCycles(_ dependencies: [String: [String]], vars: [String: JSONValue]) {
        var state: [String: Int] = [:]  // 1 visiting, 2 done
        var reported: Set<String> = []
        func visit(_ name: String, _ trail: [String], log: inout DiagnosticLog) {
            if state[name] == 2 { return }
            if state[name] == 1 {
                guard let start = trail.firstIndex(of: name) else { return }
                let cycle = Array(trail[start...]) + [name]
                let key = Set(cycle).sorted().joined(separator: ",")
                if reported.insert(key).inserted {
                    log.error(
                        JSONPath.root.appending("vars").appending(name),
                        "cycle through ${}: " + cycle.map { "vars.\($0)" }.joined(separator: " → "))
                }
                return
            }
            state[name] = 1
            for next in dependencies[name, default: []] where vars[next] != nil {
                visit(next, trail + [name], log: &log)
            }
            state[name] = 2
        }
        for name in dependencies.keys.sorted() { visit(name, [], log: &log) }
    }
}
