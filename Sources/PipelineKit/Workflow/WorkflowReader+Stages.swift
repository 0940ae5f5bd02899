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
    /// bounds and the stage type's own rules; a problem only a stage's rule finds names the stage (`id`).
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
        checkOption(with, type: .object(descriptor.optionSchema), at: options, of: stage)
        for problem in descriptor.problems(in: with) {
            log.error(
                JSONPath(components: options.components + problem.path.components), "\(stage): \(problem.message)")
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

    /// Checks a literal option value against its declared type, and a number, size, duration, bit rate or array
    /// against the bounds of its `field`;
    /// values with `${...}` are checked when they are resolved, since their type is known only then.
    private mutating func checkOption(
        _ value: JSONValue, type: OptionType, field: OptionField? = nil, at path: JSONPath, of stage: String
    ) {
        if case .string(let text) = value, text.contains("${"), let template = try? Template(parsing: text),
            !template.isLiteral
        {
            return
        }
        func mismatch(_ expected: String) {
            log.error(path, "expected \(expected), found \(value.kindName) \(value.serialized().prefix(40))")
        }
        func checkBounds(_ number: Double, of kind: String) {
            guard let field, !field.admits(number), let bounds = field.boundsDescription else { return }
            log.error(path, "expected \(kind) \(bounds), found \(value.serialized())")
        }
        switch type {
        case .any: return
        case .string: if value.stringValue == nil { mismatch("a string") }
        case .integer:
            guard let number = value.intValue else { return mismatch("an integer") }
            checkBounds(Double(number), of: "an integer")
        case .number:
            guard let number = value.doubleValue else { return mismatch("a number") }
            checkBounds(number, of: "a number")
        case .boolean: if value.boolValue == nil { mismatch("true or false") }
        case .size:
            guard let size = ByteCount(json: value) else { return mismatch(ByteCount.expected) }
            checkBounds(Double(size.bytes), of: "a size")
        case .duration:
            guard let span = TimeSpan(json: value) else { return mismatch(TimeSpan.expected) }
            checkBounds(span.seconds, of: "a duration")
        case .bitRate:
            guard let rate = BitRate(json: value) else { return mismatch(BitRate.expected) }
            checkBounds(Double(rate.bitsPerSecond), of: "a bit rate")
        case .oneOf(let choices):
            guard let text = value.stringValue else { return mismatch("one of \(type.displayName)") }
            if !choices.contains(text) {
                log.error(
                    path, "\"\(text)\" is not one of \(type.displayName)" + Suggestion.phrase(for: text, among: choices)
                )
            }
        case .array(let element):
            guard case .array(let elements) = value else { return mismatch("an array") }
            if let field, let count = field.minimumCount, !field.admits(count: elements.count) {
                let elements = count == 1 ? "element" : "elements"
                log.error(
                    path, "\(stage): \(field.name) needs at least \(count) \(elements), found \(value.serialized())")
            }
            for (index, item) in elements.enumerated() {
                checkOption(item, type: element, at: path.appending(index: index), of: stage)
            }
        case .dictionary(let valueType):
            guard case .object(let members) = value else { return mismatch("an object") }
            for (key, member) in members { checkOption(member, type: valueType, at: path.appending(key), of: stage) }
        case .object(let schema):
            guard case .object(let members) = value else { return mismatch("an object") }
            for field in schema.fields where field.isRequired && members[field.name] == nil {
                log.error(path, "missing required option \"\(field.name)\" (\(field.summary))")
            }
            for (key, member) in members {
                if let field = schema.field(named: key) {
                    checkOption(member, type: field.type, field: field, at: path.appending(key), of: stage)
                } else if let additional = schema.additionalFields {
                    checkOption(member, type: additional, at: path.appending(key), of: stage)
                } else {
                    log.keyError(
                        path.appending(key),
                        "unknown option \"\(key)\"" + Suggestion.phrase(for: key, among: schema.fields.map(\.name)))
                }
            }
        }
    }
}
