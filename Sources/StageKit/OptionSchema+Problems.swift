/// The one checker of a `with` object against the options a stage declares: `pipeline validate` runs it on a
/// workflow's literal values, and every host runs its bounds on the resolved values before a stage decodes them
/// (``Stage/decodeOptions(_:schema:)``), so a bound is refused with the same words wherever it is broken.
extension OptionSchema {
    /// The problems of `with` against these options: types, choices, required and unknown names, bounds and
    /// element counts, nested objects and arrays included. A string for which `resolvedLater` is true (a
    /// `${...}` template, in a workflow) is skipped: its type and value are known only once it is resolved.
    package func problems(
        in with: JSONValue, resolvedLater: @escaping (String) -> Bool = { _ in false }
    ) -> [OptionProblem] {
        var checker = OptionChecker(resolvedLater: resolvedLater)
        checker.check(with, type: .object(self), at: .root)
        return checker.problems
    }
}

/// Walks a value and its declared type, collecting problems.
private struct OptionChecker {
    let resolvedLater: (String) -> Bool
    var problems: [OptionProblem] = []

    private mutating func report(_ path: JSONPath, _ message: String, _ check: OptionCheck) {
        problems.append(OptionProblem(at: path, message, check: check))
    }

    mutating func check(_ value: JSONValue, type: OptionType, field: OptionField? = nil, at path: JSONPath) {
        if case .string(let text) = value, resolvedLater(text) { return }
        func mismatch(_ expected: String) {
            report(path, "expected \(expected), found \(value.kindName) \(value.serialized().prefix(40))", .type)
        }
        func checkBounds(_ number: Double, of kind: String) {
            guard let field, !field.admits(number), let bounds = field.boundsDescription else { return }
            report(path, "expected \(kind) \(bounds), found \(value.serialized())", .bounds)
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
                report(
                    path,
                    "\"\(text)\" is not one of \(type.displayName)" + Suggestion.phrase(for: text, among: choices),
                    .type)
            }
        case .array(let element):
            guard case .array(let elements) = value else { return mismatch("an array") }
            if let field, let count = field.minimumCount, !field.admits(count: elements.count) {
                let elements = count == 1 ? "element" : "elements"
                report(path, "\(field.name) needs at least \(count) \(elements), found \(value.serialized())", .count)
            }
            for (index, item) in elements.enumerated() {
                check(item, type: element, at: path.appending(index: index))
            }
        case .dictionary(let valueType):
            guard case .object(let members) = value else { return mismatch("an object") }
            for (key, member) in members { check(member, type: valueType, at: path.appending(key)) }
        case .object(let schema):
            guard case .object(let members) = value else { return mismatch("an object") }
            check(members, of: schema, at: path)
        }
    }

    /// Checks the members of an object option against its `schema`: the required ones are there, each is of its
    /// field's type, and the others are allowed by the schema.
    private mutating func check(_ members: [String: JSONValue], of schema: OptionSchema, at path: JSONPath) {
        for field in schema.fields where field.isRequired && members[field.name] == nil {
            report(path, "missing required option \"\(field.name)\" (\(field.summary))", .type)
        }
        for (key, member) in members {
            if let field = schema.field(named: key) {
                check(member, type: field.type, field: field, at: path.appending(key))
            } else if let additional = schema.additionalFields {
                check(member, type: additional, at: path.appending(key))
            } else {
                report(
                    path.appending(key),
                    "unknown option \"\(key)\"" + Suggestion.phrase(for: key, among: schema.fields.map(\.name)),
                    .name)
            }
        }
    }
}
