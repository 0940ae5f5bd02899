public import StageKit

/// What a run would do with one stage of an item: `pipeline plan`'s per-stage line.
public struct StagePreview: Sendable, Hashable {
    /// What happens.
    public enum Action: String, Sendable, Hashable {
        /// It runs.
        case run
        /// Its checkpoint is reused.
        case reuse
        /// Its `if` is false.
        case skip
    }

    /// The stage id.
    public var stage: String
    /// The stage type.
    public var uses: String
    /// What happens.
    public var action: Action
    /// Why.
    public var reason: String?
    /// Its options resolved, with secrets as their expressions; nil when they depend on a stage that runs
    /// first.
    public var options: JSONValue?
    /// The stages it waits for (the one before it, or those its `after` names).
    public var after: [String] = []
    /// The export it uploads while it is written (`"stream": true`); nil when it does not stream.
    public var streams: String?
    /// How it would run, as its type says (``StageKit/PlanDescribing``): how an export is split, say.
    public var note: String?
}

extension StageRegistry {
    /// Adds to each stage of `previews` that would run what its type says of how it would run
    /// (``StageDescriptor/planNote(options:input:checkpoint:)``), given the checkpoints of `planned`'s current
    /// version (not read when the run would make a new version). Reads inputs; writes nothing.
    public func describe(
        _ previews: inout [StagePreview], of planned: PlannedItem, checkpoints: [String: StageRecord]
    ) async {
        let checkpoints = planned.admission?.newVersion == true ? [:] : checkpoints
        for index in previews.indices where previews[index].action == .run {
            guard let options = previews[index].options, let descriptor = descriptor(for: previews[index].uses)
            else { continue }
            previews[index].note = await descriptor.planNote(
                options: options, input: planned.input.path, checkpoint: checkpoints[previews[index].stage]?.resume)
        }
    }
}

extension StageDecisions {
    /// What a run would do with the stages of a planned item whose stages run, decided exactly as the run
    /// decides: from the checkpoints of the item's current version, and with `previous` as the outputs of
    /// the version before (when the item's content changed, the current version becomes the previous one).
    /// Writes nothing, runs nothing.
    public func preview(
        _ planned: PlannedItem, checkpoints: [String: StageRecord], previous: [String: JSONValue]
    ) -> [StagePreview] {
        guard let admission = planned.admission else { return [] }
        let records = admission.newVersion ? [:] : checkpoints
        let previous =
            admission.newVersion
            ? checkpoints.filter { $0.value.status == .succeeded }.mapValues { $0.outputs ?? .null } : previous
        let graph = workflow.graph
        var walk = PreviewWalk(previews: unrunPreviews(graph))
        var unresolvable: String?
        do {
            walk.scope = try self.scope(for: planned.input, previous: previous)
        } catch {
            unresolvable = "its vars cannot be resolved: \(redactor.redact("\(error)"))"
        }
        for index in graph.order {
            let spec = workflow.stages[index]
            if let reason = unresolvable ?? walk.blocked[index] {
                walk.previews[index].reason = reason
                continue
            }
            do {
                let (decision, _) = try decide(
                    spec, record: records[spec.id], scope: walk.scope, invalidated: walk.invalidated.contains(index))
                walk.previews[index].options = decision.options.map { redactor.shown($0.redacted) }
                walk.apply(decision, of: index, spec: spec, record: records[spec.id], graph: graph)
            } catch {
                walk.previews[index].reason = "\(error)"
                walk.block(dependentsOf: index, in: graph, "stage \(spec.id) cannot start")
            }
        }
        return walk.previews
    }

    /// The previews of the workflow's stages before anything is decided: each runs.
    private func unrunPreviews(_ graph: StageGraph) -> [StagePreview] {
        let streaming = workflow.streaming
        return workflow.stages.enumerated().map { index, spec in
            StagePreview(
                stage: spec.id, uses: spec.uses, action: .run, after: graph.waitIDs(of: index),
                streams: streaming.follows[index].map { workflow.stages[$0].id })
        }
    }
}

/// What a preview has decided so far, stage after stage in the order they run: each stage's preview, the outputs
/// the later stages read, the stages invalidated by one that runs, and per stage why it is blocked: the first stage
/// it waits for that runs (or cannot start).
private struct PreviewWalk {
    var previews: [StagePreview]
    var scope = EvaluationScope()
    var invalidated: Set<Int> = []
    var blocked: [Int: String] = [:]

    /// Blocks the stages that wait for stage `index`, unless something blocks them already.
    mutating func block(dependentsOf index: Int, in graph: StageGraph, _ reason: String) {
        for dependent in graph.dependents(of: index) where blocked[dependent] == nil {
            blocked[dependent] = reason
        }
    }

    /// Shows the `decision` about stage `index` in its preview, and passes on to the later stages what the run
    /// would: its outputs, the stages it invalidates, and, when it runs, why they are blocked.
    mutating func apply(
        _ decision: StageDecisions.Decision, of index: Int, spec: StageSpec, record: StageRecord?, graph: StageGraph
    ) {
        switch decision {
        case .skip(let reason):
            previews[index].action = .skip
            previews[index].reason = reason
            scope.stageOutputs[spec.id] = .null
            if record?.isConditionSkip != true || invalidated.contains(index) {
                invalidated.formUnion(graph.dependents(of: index))
            }
        case .reuse(let outputs, _):
            previews[index].action = .reuse
            scope.stageOutputs[spec.id] = outputs
        case .regenerate(let reason, _):
            previews[index].reason = "\(reason) (the stages that wait for it stand if it makes the same files again)"
            scope.stageOutputs[spec.id] = record?.outputs ?? .null
        case .run(let reason, _):
            previews[index].reason = reason
            if !spec.isSecret {
                invalidated.formUnion(graph.dependents(of: index))
                block(dependentsOf: index, in: graph, "stage \(spec.id) runs first")
            }
        }
    }
}
