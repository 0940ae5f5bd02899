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
        var scope = EvaluationScope()
        var previews: [StagePreview] = []
        var invalidated = false
        var blocked: String?
        do {
            scope = try self.scope(for: planned.input, previous: previous)
        } catch {
            blocked = "its vars cannot be resolved: \(redactor.redact("\(error)"))"
        }
        for spec in workflow.stages {
            var preview = StagePreview(stage: spec.id, uses: spec.uses, action: .run)
            if let blocked {
                preview.reason = blocked
                previews.append(preview)
                continue
            }
            do {
                let (decision, _) = try decide(spec, record: records[spec.id], scope: scope, invalidated: invalidated)
                preview.options = decision.options.map { redactor.redact($0.redacted) }
                switch decision {
                case .skip(let reason):
                    preview.action = .skip
                    preview.reason = reason
                    scope.stageOutputs[spec.id] = .null
                    invalidated = invalidated || records[spec.id]?.status != .skipped
                case .reuse(let outputs, _):
                    preview.action = .reuse
                    scope.stageOutputs[spec.id] = outputs
                case .regenerate(let reason, _):
                    preview.reason = "\(reason) (the stages after it stand if it makes the same files again)"
                    scope.stageOutputs[spec.id] = records[spec.id]?.outputs ?? .null
                case .run(let reason, _):
                    preview.reason = reason
                    if !spec.isSecret {
                        invalidated = true
                        blocked = "stage \(spec.id) runs first"
                    }
                }
            } catch {
                preview.reason = "\(error)"
                blocked = "stage \(spec.id) cannot start"
            }
            previews.append(preview)
        }
        return previews
    }
}
