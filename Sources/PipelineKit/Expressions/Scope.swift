import Foundation
package import StageKit

/// A value computed from a template, with the form in which it may be stored or logged.
package struct ResolvedValue: Sendable, Hashable {
    /// The real value, handed to the stage.
    package var value: JSONValue
    /// The value with every part that came from `env.*` (directly or through `vars`) replaced by its
    /// `${...}` expression: what hashes and state files see.
    package var redacted: JSONValue
    /// Whether any part came from `env.*`.
    package var isSecret: Bool

    /// A value with no secret in it.
    package init(plain value: JSONValue) {
        self.value = value
        self.redacted = value
        self.isSecret = false
    }

    init(value: JSONValue, redacted: JSONValue, isSecret: Bool) {
        self.value = value
        self.redacted = redacted
        self.isSecret = isSecret
    }
}

/// A template that could not be evaluated: a missing environment variable, a missing output.
package struct EvaluationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    package var message: String
    /// Where in the workflow the template is.
    package var path: JSONPath?

    package var description: String {
        path.map { "\($0): \(message)" } ?? message
    }
}

/// What `${...}` can see while one item runs: its input facts, the workflow's vars, the environment,
/// and the outputs of the stages that already ran.
package struct EvaluationScope: Sendable {
    /// `input.*` facts of the item.
    package var input: JSONValue
    /// Resolved `vars.*`.
    package var vars: [String: ResolvedValue]
    /// `env.*`: every value read from here is a secret.
    package var environment: [String: String]
    /// `previous.*`: the outputs of the previous version's stages, by stage id (empty for a first version).
    package var previous: [String: JSONValue] = [:]
    /// Outputs of finished stages by stage id (a skipped stage has `null`).
    package var stageOutputs: [String: JSONValue] {
        didSet { stageOrder.append(contentsOf: stageOutputs.keys.filter { !stageOrder.contains($0) }.sorted()) }
    }
    /// Stage ids in the order their outputs arrived.
    package private(set) var stageOrder: [String] = []

    /// Creates a scope.
    package init(
        input: JSONValue = .object([:]), vars: [String: ResolvedValue] = [:], environment: [String: String] = [:],
        stageOutputs: [String: JSONValue] = [:]
    ) {
        self.input = input
        self.vars = vars
        self.environment = environment
        self.stageOutputs = stageOutputs
    }

    /// Evaluates a JSON tree: every string in it is a template.
    package func resolve(_ json: JSONValue, at path: JSONPath = .root) throws(EvaluationError) -> ResolvedValue {
        switch json {
        case .string(let string):
            let template: Template
            do {
                template = try Template(parsing: string)
            } catch {
                throw EvaluationError(message: error.message, path: path)
            }
            return try resolve(template, at: path)
        case .array(let elements):
            var values: [JSONValue] = []
            var redacted: [JSONValue] = []
            var secret = false
            for (index, element) in elements.enumerated() {
                let resolved = try resolve(element, at: path.appending(index: index))
                values.append(resolved.value)
                redacted.append(resolved.redacted)
                secret = secret || resolved.isSecret
            }
            return ResolvedValue(value: .array(values), redacted: .array(redacted), isSecret: secret)
        case .object(let members):
            var values: [String: JSONValue] = [:]
            var redacted: [String: JSONValue] = [:]
            var secret = false
            for (key, member) in members {
                let resolved = try resolve(member, at: path.appending(key))
                values[key] = resolved.value
                redacted[key] = resolved.redacted
                secret = secret || resolved.isSecret
            }
            return ResolvedValue(value: .object(values), redacted: .object(redacted), isSecret: secret)
        default:
            return ResolvedValue(plain: json)
        }
    }

    /// Evaluates one template.
    package func resolve(_ template: Template, at path: JSONPath = .root) throws(EvaluationError) -> ResolvedValue {
        if let expression = template.singleExpression, case .expression(_, let source) = template.segments[0] {
            let (value, secret) = try evaluate(expression, at: path)
            return ResolvedValue(value: value, redacted: secret ? .string("${\(source)}") : value, isSecret: secret)
        }
        var text = ""
        var redacted = ""
        var secret = false
        for segment in template.segments {
            switch segment {
            case .text(let literal):
                text += literal
                redacted += literal.replacingDollarBraces()
            case .expression(let expression, let source):
                let (value, isSecret) = try evaluate(expression, at: path)
                text += value.interpolated
                redacted += isSecret ? "${\(source)}" : value.interpolated.replacingDollarBraces()
                secret = secret || isSecret
            }
        }
        return ResolvedValue(value: .string(text), redacted: .string(redacted), isSecret: secret)
    }

    /// Evaluates an expression; the flag tells whether the result depends on a secret.
    package func evaluate(_ expression: Expression, at path: JSONPath = .root) throws(EvaluationError) -> (
        JSONValue, secret: Bool
    ) {
        switch expression {
        case .literal(let value):
            return (value, false)
        case .reference(let reference):
            return try lookup(reference, at: path)
        case .not(let operand):
            let (value, secret) = try evaluate(operand, at: path)
            return (.bool(!value.isTruthy), secret)
        case .binary(.coalesce, let left, let right):
            if let (value, secret) = try? evaluate(left, at: path), value != .null {
                return (value, secret)
            }
            return try evaluate(right, at: path)
        case .binary(let op, let left, let right):
            let (lhs, leftSecret) = try evaluate(left, at: path)
            let secret = leftSecret
            switch op {
            case .and:
                guard lhs.isTruthy else { return (.bool(false), secret) }
                let (rhs, rightSecret) = try evaluate(right, at: path)
                return (.bool(rhs.isTruthy), secret || rightSecret)
            case .or:
                if lhs.isTruthy { return (.bool(true), secret) }
                let (rhs, rightSecret) = try evaluate(right, at: path)
                return (.bool(rhs.isTruthy), secret || rightSecret)
            default:
                let (rhs, rightSecret) = try evaluate(right, at: path)
                return (.bool(try compare(op, lhs, rhs, at: path)), secret || rightSecret)
            }
        }
    }

    private func compare(_ op: BinaryOperator, _ lhs: JSONValue, _ rhs: JSONValue, at path: JSONPath)
        throws(EvaluationError) -> Bool
    {
        if let left = lhs.doubleValue, let right = rhs.doubleValue {
            switch op {
            case .equal: return left == right
            case .notEqual: return left != right
            case .less: return left < right
            case .lessOrEqual: return left <= right
            case .greater: return left > right
            case .greaterOrEqual: return left >= right
            default: break
            }
        }
        switch op {
        case .equal: return lhs == rhs
        case .notEqual: return lhs != rhs
        default:
            guard let left = lhs.stringValue, let right = rhs.stringValue else {
                throw EvaluationError(
                    message: "cannot compare \(lhs.kindName) with \(rhs.kindName) using '\(op.rawValue)'", path: path)
            }
            switch op {
            case .less: return left < right
            case .lessOrEqual: return left <= right
            case .greater: return left > right
            default: return left >= right
            }
        }
    }

    private func lookup(_ reference: Reference, at path: JSONPath) throws(EvaluationError) -> (JSONValue, secret: Bool)
    {
        var remaining = reference.components[...]
        let (base, secret) = try root(of: reference, taking: &remaining, at: path)
        var value = base
        var walked = Reference(
            root: reference.root,
            components: Array(
                reference.components.prefix(
                    reference.components.count - remaining.count)))
        for component in remaining {
            walked.components.append(component)
            switch (component, value) {
            case (.key(let key), .object(let members)) where members[key] != nil:
                value = members[key] ?? .null
            case (.index(let index), .array(let elements)) where elements.indices.contains(index):
                value = elements[index]
            default:
                throw EvaluationError(message: "\(walked) does not exist", path: path)
            }
        }
        return (value, secret)
    }

    /// The value the root of `reference` names (`input`, `vars.<name>`, `env.<name>`, `previous.<stage>` or a
    /// stage's outputs), and whether it is secret; takes from `components` the components the root consumes.
    private func root(
        of reference: Reference, taking components: inout ArraySlice<JSONPath.Component>, at path: JSONPath
    ) throws(EvaluationError) -> (JSONValue, secret: Bool) {
        switch reference.root {
        case "input":
            return (input, false)
        case "vars":
            guard case .key(let name) = components.popFirst() else {
                throw EvaluationError(message: "${vars} needs a name, e.g. ${vars.api}", path: path)
            }
            guard let resolved = vars[name] else {
                throw EvaluationError(message: "vars.\(name) is not defined", path: path)
            }
            return (resolved.value, resolved.isSecret)
        case "env":
            guard case .key(let name) = components.popFirst() else {
                throw EvaluationError(message: "${env} needs a name, e.g. ${env.HOME}", path: path)
            }
            guard let value = environment[name] else {
                throw EvaluationError(
                    message:
                        "environment variable \(name) is not set (write ${env.\(name) ?? 'default'} for a default)",
                    path: path)
            }
            return (.string(value), true)
        case "previous":
            guard case .key(let stage) = components.popFirst() else {
                throw EvaluationError(message: "${previous} needs a stage id, e.g. ${previous.ticket.uri}", path: path)
            }
            guard let outputs = previous[stage] else {
                throw EvaluationError(
                    message:
                        "previous.\(stage) does not exist: this is the item's first version, or the stage did not finish in the previous one (write ${previous.\(stage).x ?? ''} for a default)",
                    path: path)
            }
            return (outputs, false)
        default:
            guard let outputs = stageOutputs[reference.root] else {
                throw EvaluationError(message: "stage '\(reference.root)' has not run for this item", path: path)
            }
            return (outputs, false)
        }
    }
}

extension String {
    /// Escapes `${` as `$${`, so a redacted string can never be mistaken for a template.
    func replacingDollarBraces() -> String {
        replacingOccurrences(of: "${", with: "$${")
    }
}
