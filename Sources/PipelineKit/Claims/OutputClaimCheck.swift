public import StageKit

/// Finds, before any stage runs, the items of a plan that would write a file another item writes: one claimed in
/// the ledger by another item (of any workflow of the state folder or batch, queued or done), or one that another new
/// item of the same plan would write too. `run`, `watch` and `submit` record such an item as failed with
/// ``ErrorKind/outputCollision`` instead of running it; `plan` shows it as refused.
///
/// The files are those the stage types declare (``StageKit/Stage/destinations(in:)``) with options resolved from the
/// input, `vars` and `env` alone: a stage option that takes an earlier stage's output is known only when that stage
/// has run, and the file is then claimed as the stage that writes it starts (``Runner``).
public struct OutputClaimCheck: Sendable {
    /// The workflow.
    public var workflow: Workflow
    /// Its stage types.
    public var registry: StageRegistry
    /// `env.*`.
    public var environment: [String: String]

    /// A check of a workflow's plans.
    public init(workflow: Workflow, registry: StageRegistry, environment: [String: String]) {
        self.workflow = workflow
        self.registry = registry
        self.environment = environment
    }

    /// The stages with their types: only a type that declares destinations names any.
    private var writers: [(StageSpec, StageDescriptor)] {
        workflow.stages.compactMap { spec in registry.descriptor(for: spec.uses).map { (spec, $0) } }
    }

    /// The files an item of `input` writes at paths the workflow chose, in normal form (``OutputPath``), sorted: what
    /// is known of them before any of its stages runs. A stage whose `if` is false writes none. `relative` is a
    /// stage that declares one of them as a relative path, with that path (the first found).
    public func destinations(of input: InputItem) -> (paths: [String], relative: String?) {
        let decisions = StageDecisions(workflow: workflow, redactor: .none, environment: environment)
        guard let scope = try? decisions.scope(for: input, previous: [:]) else { return ([], nil) }
        var paths: Set<String> = []
        var relative: String?
        for (spec, descriptor) in writers {
            if let condition = spec.condition, (try? decisions.evaluate(condition, spec: spec, scope: scope)) == false {
                continue
            }
            // Options that read an earlier stage's output are known when the stage starts: it claims them then. (Left
            // out, such an option would not be the stage's, and an optional one would name another file.)
            guard let options = try? scope.resolve(spec.with).value else { continue }
            if relative == nil, let path = descriptor.destinations(with: options).first(where: { !$0.hasPrefix("/") }) {
                relative = "stage \(spec.id) (\(spec.uses)) writes \(path)"
            }
            paths.formUnion(OutputPath.destinations(of: descriptor, options: options))
        }
        return (paths.sorted(), relative)
    }

    /// Gives each item of `plan` whose stages run its ``PlannedItem/destinations``, and a ``PlannedItem/collision``
    /// to each that would write a file that another item claims in `store` or that another item of the plan that
    /// holds no claim on it would write too (then each of them is refused: which one was meant is not known).
    public func check(_ plan: inout BatchPlan, store: (any StateStore)?) async throws(StateError) {
        var writers: [String: [Int]] = [:]
        for index in plan.items.indices where plan.items[index].admission != nil && plan.items[index].damage == nil {
            let (paths, relative) = destinations(of: plan.items[index].input)
            plan.items[index].destinations = paths
            if plan.relativeDestination == nil { plan.relativeDestination = relative }
            for path in paths { writers[path, default: []].append(index) }
        }
        guard !writers.isEmpty else { return }
        let claims = try await store?.outputClaims(paths: Array(writers.keys)) ?? [:]
        for (path, indices) in writers.sorted(by: { $0.key < $1.key }) {
            if let claim = claims[path] {
                for index in indices where plan.items[index].itemID != claim.item {
                    plan.items[index].refuse(OutputCollision(claim))
                }
            } else if indices.count > 1 {
                for index in indices {
                    let other = indices.first { $0 != index }.map { plan.items[$0].input.path } ?? ""
                    plan.items[index].refuse(OutputCollision(path: path, sameBatchAs: other))
                }
            }
        }
    }
}

extension PlannedItem {
    /// Refuses the item for `collision`, unless it is refused already.
    mutating func refuse(_ collision: OutputCollision) {
        if self.collision == nil { self.collision = collision }
    }
}
