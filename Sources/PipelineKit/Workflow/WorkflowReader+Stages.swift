import Foundation
import StageKit

/// The stages of a workflow (`stages` and `onCancel`) and their options, checked against each stage type's schema.
extension WorkflowReader {
    /// The stages of `stages` or `onCancel` (`key`); `seen` holds the ids taken so far, across both.
    mutating func readStages(
        _ value: JSONValue?, key: String, defaults: (retry: RetryPolicy, timeout: TimeSpan?),
        seen: inout [String: JSONPath]
    ) -> [StageSpec] {
        let path = JSONPath.root.appending(key)
        guard let value else {
            log.error(.root, "missing \"stages\": a workflow needs at least one stage")
            return []
        }
        guard case .array(let elements) = value else {
            log.error(path, "expected an array of stages, found \(value.kindName)")
            return []
        }
        if elements.isEmpty { log.error(path, "\(key) is empty: a workflow needs at least one stage") }
        var stages: [StageSpec] = []
        for (index, element) in elements.enumerated() {
            let stage = readStage(
                element, at: path.appending(index: index), index: index, defaults: defaults, seen: &seen)
            if let stage { stages.append(stage) }
        }
        return stages
    }

    private mutating func readStage(
        _ element: JSONValue, at path: JSONPath, index: Int, defaults: (retry: RetryPolicy, timeout: TimeSpan?),
        seen: inout [String: JSONPath]
    ) -> StageSpec? {
        guard case .object(let members) = element else {
            log.error(path, "expected a stage object with \"id\" and \"uses\", found \(element.kindName)")
            return nil
        }
        checkKeys(members, of: WorkflowGrammar.stage, at: path)
        // A description is for people only; it is checked so that a schema-valid file is the same as a valid one.
        _ = string(members["description"], at: path.appending("description"))
        let id = string(members["id"], at: path.appending("id"), required: true) ?? "#\(index)"
        if members["id"]?.stringValue != nil { checkStageID(id, of: path, seen: &seen) }
        let uses = string(members["uses"], at: path.appending("uses"), required: true) ?? ""
        let with = members["with"] ?? .object([:])
        checkUses(uses, with: with, of: id, at: path)
        return StageSpec(
            id: id, uses: uses, with: with,
            retry: readRetry(members["retry"], at: path.appending("retry"), base: defaults.retry),
            timeout: duration(members["timeout"], at: path.appending("timeout")) ?? defaults.timeout,
            condition: readCondition(members["if"], at: path.appending("if")), path: path,
            refreshWith: string(members["refreshWith"], at: path.appending("refreshWith")),
            isSecret: bool(members["secret"], at: path.appending("secret")) ?? false,
            after: readAfter(members["after"], at: path.appending("after")),
            stream: bool(members["stream"], at: path.appending("stream")) ?? false)
    }

    /// `"after"`: the ids of the stages a stage waits for; whether they exist is checked with the references.
    private mutating func readAfter(_ value: JSONValue?, at path: JSONPath) -> [String]? {
        guard let value else { return nil }
        guard case .array(let elements) = value else {
            log.error(path, "expected an array of stage ids such as [\"export\"], found \(value.kindName)")
            return nil
        }
        var ids: [String] = []
        for (index, element) in elements.enumerated() {
            guard let id = string(element, at: path.appending(index: index)) else { continue }
            if ids.contains(id) {
                log.error(path.appending(index: index), "stage \"\(id)\" is named twice in after; name it once")
            }
            ids.append(id)
        }
        return ids
    }

    /// A stage id must be an identifier, not a reserved root, and unique across `stages` and `onCancel`.
    private mutating func checkStageID(_ id: String, of stage: JSONPath, seen: inout [String: JSONPath]) {
        let path = stage.appending("id")
        if !WorkflowNames.isIdentifier(id) {
            log.error(path, "a stage id must start with a letter or '_' and contain only letters, digits, '_' or '-'")
        } else if WorkflowLoader.reservedRoots.contains(id) {
            log.error(path, "\"\(id)\" is reserved for ${\(id).…}; choose another stage id")
        } else if let first = seen[id] {
            log.error(path, "duplicate stage id \"\(id)\" (first used at \(first))")
        } else {
            seen[id] = stage
        }
    }

    /// The stage type must be registered, and `with` must be an object of its options that keeps to their types,
    /// bounds and the stage type's own rules; a problem only a rule finds (a count, or the stage's own) names the
    /// stage (`id`).
    private mutating func checkUses(_ uses: String, with: JSONValue, of id: String, at path: JSONPath) {
        guard case .object = with else {
            log.error(path.appending("with"), "expected an object of options, found \(with.kindName)")
            if !uses.isEmpty, registry.descriptor(for: uses) == nil { reportUnknownType(uses, at: path) }
            return
        }
        guard !uses.isEmpty else { return }
        guard let descriptor = registry.descriptor(for: uses) else { return reportUnknownType(uses, at: path) }
        let options = path.appending("with")
        let stage = "stage \"\(id)\" (\(uses))"
        // A value with `${...}` is checked when it is resolved, since its type is known only then.
        let declared = descriptor.optionSchema.problems(in: with) { text in
            text.contains("${") && (try? Template(parsing: text)).map { !$0.isLiteral } == true
        }
        for problem in declared + descriptor.problems(in: with) {
            let at = JSONPath(components: options.components + problem.path.components)
            switch problem.check {
            case .name?: log.keyError(at, problem.message)
            case .type?, .bounds?: log.error(at, problem.message)
            case .count?, nil: log.error(at, "\(stage): \(problem.message)")
            }
        }
    }

    private mutating func reportUnknownType(_ uses: String, at path: JSONPath) {
        log.error(path.appending("uses"), registry.unknownTypeMessage(uses))
    }

    /// `"if"`: a condition, written with or without `${...}`, or a constant.
    private mutating func readCondition(_ value: JSONValue?, at path: JSONPath) -> String? {
        switch value {
        case nil: return nil
        case .bool(let flag): return flag ? "${true}" : "${false}"
        case .string(let text):
            // `"if": "input.ext == 'mov'"` means the same as `"if": "${input.ext == 'mov'}"`.
            guard text.contains("${") else { return "${\(text)}" }
            // Trimmed as the check reads it: a space after `}` would make the condition a string, always true.
            let condition = text.trimmingWhitespace()
            checkConditionIsOneExpression(condition, at: path)
            return condition
        case let other?:
            log.error(path, "expected a condition such as \"${input.ext == 'mov'}\", found \(other.kindName)")
            return nil
        }
    }

    /// A condition with text around its `${...}` (`"${input.ext} == 'mov'"`) is a string, true whatever the values:
    /// the stage would always run. It is refused, with the condition written as one expression when that reads the
    /// same (each `${...}` in parentheses; none when the text quotes one, as in `'${input.ext}' == 'mov'`).
    private mutating func checkConditionIsOneExpression(_ text: String, at path: JSONPath) {
        guard let template = try? Template(parsing: text), template.singleExpression == nil else { return }
        let texts = template.segments.compactMap { segment -> String? in
            if case .text(let text) = segment { return text }
            return nil
        }
        // Expressions side by side with nothing between can be empty, and an empty string is false; any text
        // (a space too) makes the string non-empty, so true.
        guard !texts.isEmpty else { return }
        let segments = template.segments
        let quoted = zip(segments, segments.dropFirst()).contains { pair in
            switch pair {
            case (.text(let text), .expression): text.last == "'" || text.last == "\""
            case (.expression, .text(let text)): text.first == "'" || text.first == "\""
            default: false
            }
        }
        let whole = segments.map { segment in
            switch segment {
            case .text(let text): text
            case .expression(_, let source):
                source.allSatisfy { $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" } ? source : "(\(source))"
            }
        }.joined().trimmingWhitespace()
        let parses = (try? Template(parsing: "${\(whole)}"))?.singleExpression != nil
        let suggestion = parses && !quoted ? " (did you mean \"${\(whole)}\"?)" : ""
        log.error(
            path,
            "text around ${...} makes the condition a string, which is always true; write the whole condition inside "
                + "one ${...}, or without it\(suggestion)")
    }
}
