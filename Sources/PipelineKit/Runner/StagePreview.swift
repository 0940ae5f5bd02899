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
        var scope = EvaluationScope()
        let streaming = workflow.streaming
        var previews = workflow.stages.enumerated().map { index, spec in
            StagePreview(
                stage: spec.id, uses: spec.uses, action: .run, after: graph.waitIDs(of: index),
                streams: streaming.follows[index].map { workflow.stages[$0].id })
        }
        // Per stage, why it is invalidated or blocked: the first stage it waits for that runs (or cannot start).
        var invalidated: Set<Int> = []
        var blocked: [Int: String] = [:]
        var unresolvable: String?
        do {
            scope = try self.scope(for: planned.input, previous: previous)
        } catch {
            unresolvable = "its vars cannot be resolved: \(redactor.redact("\(error)"))"
        }
        for index in graph.order {
            let spec = workflow.stages[index]
            if let reason = unresolvable ?? blocked[index] {
                previews[index].reason = reason
                continue
            }
            func block(_ reason: String) {
                for dependent in graph.dependents(of: index) where blocked[dependent] == nil {
                    blocked[dependent] = reason
                }
            }
            do {
                let (decision, _) = try decide(
                    spec, record: records[spec.id], scope: scope, invalidated: invalidated.contains(index))
                previews[index].options = decision.options.map { redactor.redact($0.redacted) }
                switch decision {
                case .skip(let reason):
                    previews[index].action = .skip
                    previews[index].reason = reason
                    scope.stageOutputs[spec.id] = .null
                    if records[spec.id]?.isConditionSkip != true || invalidated.contains(index) {
                        invalidated.formUnion(graph.dependents(of: index))
                    }
                case .reuse(let outputs, _):
                    previews[index].action = .reuse
                    scope.stageOutputs[spec.id] = outputs
                case .regenerate(let reason, _):
                    previews[index].reason =
                        "\(reason) (the stages that wait for it stand if it makes the same files again)"
                    scope.stageOutputs[spec.id] = records[spec.id]?.outputs ?? .null
                case .run(let reason, _):
                    previews[index].reason = reason
                    if !spec.isSecret {
                        invalidated.formUnion(graph.dependents(of: index))
                        block("stage \(spec.id) runs first")
                    }
                }
            } catch {
                previews[index].reason = "\(error)"
                block("stage \(spec.id) cannot start")
            }
        }
        return previews
    }
}
