import Crypto
import Foundation
import StageKit

/// Decides, for one item, what happens to each stage (skip, reuse its checkpoint, or run) and resolves its
/// options: the runner acts on these decisions and `pipeline plan` shows them, so the two cannot disagree.
public struct StageDecisions: Sendable {
    /// The workflow.
    public var workflow: Workflow
    /// Keeps secrets out of hashes, reasons and previews.
    public var redactor: SecretRedactor
    /// `env.*`.
    public var environment: [String: String]

    /// Creates the decisions of a workflow.
    public init(workflow: Workflow, redactor: SecretRedactor, environment: [String: String]) {
        self.workflow = workflow
        self.redactor = redactor
        self.environment = environment
    }

    /// What happens to one stage.
    enum Decision {
        /// Its `if` is false.
        case skip(reason: String)
        /// Its checkpoint is up to date: these are its outputs.
        case reuse(JSONValue, options: ResolvedValue)
        /// It runs with these options, for this reason.
        case run(reason: String, options: ResolvedValue)
        /// Done with these options, but a file among its outputs is missing or changed (another machine made
        /// it, or it was deleted): it runs again, and the stages after it stand if it makes the same files.
        case regenerate(reason: String, options: ResolvedValue)

        /// The resolved options; nil when the stage is skipped.
        var options: ResolvedValue? {
            switch self {
            case .skip: nil
            case .reuse(_, let options), .run(_, let options), .regenerate(_, let options): options
            }
        }
    }

    /// Decides what happens to a stage, with the hash of its resolved options (empty when it is skipped).
    func decide(_ spec: StageSpec, record: StageRecord?, scope: EvaluationScope, invalidated: Bool) throws -> (
        Decision, hash: String
    ) {
        if let condition = spec.condition, !(try evaluate(condition, spec: spec, scope: scope)) {
            return (.skip(reason: StageRecord.conditionSkip(condition)), "")
        }
        let (options, hash) = try resolveOptions(spec, scope: scope)
        guard let record else { return (.run(reason: "it has not run", options: options), hash) }
        if spec.isSecret { return (.run(reason: "its outputs are secret and never stored", options: options), hash) }
        if invalidated { return (.run(reason: "an earlier stage runs", options: options), hash) }
        if record.status != .succeeded {
            // Files on a record that did not succeed: a regeneration that was cut short is taken up as one.
            if record.files != nil, record.optionsHash == hash {
                let reason = "making its output files again was \(record.status.rawValue)"
                return (.regenerate(reason: reason, options: options), hash)
            }
            return (.run(reason: "\(record.status.rawValue) last time", options: options), hash)
        }
        if record.optionsHash != hash {
            let changed = Self.changedOptions(record.options, redactor.shown(options.redacted))
            let reason = changed.isEmpty ? "its options changed" : "changed: \(changed.joined(separator: ", "))"
            return (.run(reason: reason, options: options), hash)
        }
        if let files = record.files, let change = OutputFiles.firstChange(in: files) {
            return (.regenerate(reason: change, options: options), hash)
        }
        return (.reuse(record.outputs ?? .null, options: options), hash)
    }

    /// The top-level options whose values differ between two resolved option objects.
    private static func changedOptions(_ old: JSONValue?, _ new: JSONValue) -> [String] {
        guard let old = old?.objectValue, let new = new.objectValue else { return [] }
        return Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }.sorted()
    }

    /// A stage's options resolved against the scope, and the hash that decides whether it is up to date.
    func resolveOptions(_ spec: StageSpec, scope: EvaluationScope) throws -> (ResolvedValue, String) {
        let options: ResolvedValue
        do {
            options = try scope.resolve(spec.with, at: spec.path.appending("with"))
        } catch {
            throw ItemFailure(
                report: FailureReport(
                    message:
                        "stage \(spec.id) (\(spec.uses)) cannot resolve its options: \(redactor.redact("\(error)"))",
                    kind: .invalidOptions))
        }
        // Secrets count as their expressions, also where they arrive through another stage's outputs, so a
        // rotated token reruns nothing.
        return (options, Self.optionsHash(uses: spec.uses, options: redactor.redact(options.redacted)))
    }

    /// Evaluates an `if` condition.
    func evaluate(_ condition: String, spec: StageSpec, scope: EvaluationScope) throws -> Bool {
        do {
            return try scope.resolve(try Template(parsing: condition), at: spec.path.appending("if")).value.isTruthy
        } catch let error as EvaluationError {
            throw ItemFailure(
                report: FailureReport(
                    message: "stage \(spec.id): cannot evaluate its if condition: \(error)", kind: .invalidOptions))
        }
    }

    /// Resolves `vars` for one item, each var after the vars it references.
    func resolveVars(for item: InputItem) throws -> [String: ResolvedValue] {
        var resolved: [String: ResolvedValue] = [:]
        func resolve(_ name: String, depth: Int) throws {
            guard resolved[name] == nil, let value = workflow.vars[name], depth < 100 else { return }
            value.forEachString { text in
                for expression in (try? Template(parsing: text))?.expressions ?? [] {
                    for reference in expression.references where reference.root == "vars" {
                        if let member = reference.member { try? resolve(member, depth: depth + 1) }
                    }
                }
            }
            let scope = EvaluationScope(input: item.facts, vars: resolved, environment: environment)
            resolved[name] = try scope.resolve(value, at: JSONPath.root.appending("vars").appending(name))
        }
        for name in workflow.vars.keys.sorted() { try resolve(name, depth: 0) }
        return resolved
    }

    /// The scope an item's stages start with.
    func scope(for input: InputItem, previous: [String: JSONValue]) throws -> EvaluationScope {
        var scope = EvaluationScope(input: input.facts, vars: try resolveVars(for: input), environment: environment)
        scope.previous = previous
        return scope
    }

    /// The hash that decides whether a finished stage is still up to date.
    static func optionsHash(uses: String, options: JSONValue) -> String {
        let canonical = JSONValue.object(["uses": .string(uses), "with": options]).serialized()
        return HexDigest.text(SHA256.hash(data: Data(canonical.utf8)).prefix(16))
    }
}

/// A failure that ends an item, already described for people.
struct ItemFailure: Error, CustomStringConvertible {
    var report: FailureReport
    var description: String { report.message }
}
