public import StageKit

/// The JSON Schema (draft 2020-12) of workflow files, generated from the same rules and stage option
/// schemas the loader checks, so editors and `pipeline validate` agree.
public enum WorkflowSchema {
    /// The schema for the stage types in `registry`.
    public static func generate(registry: StageRegistry) -> JSONValue {
        let stageTypes = registry.all
        var stage = object(WorkflowGrammar.stage, stageTypes: stageTypes).objectValue ?? [:]
        stage["allOf"] = .array(
            stageTypes.map { descriptor in
                [
                    "if": ["properties": ["uses": ["const": .string(descriptor.stageType)]], "required": ["uses"]],
                    "then": ["properties": ["with": schema(for: .object(descriptor.optionSchema))]],
                ]
            })
        var root = object(WorkflowGrammar.workflow, stageTypes: stageTypes).objectValue ?? [:]
        root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        root["$id"] = "workflow.schema.json"
        root["title"] = .string("media-pipeline workflow, version \(Workflow.formatVersion)")
        root["$defs"] = [
            "expression": [
                "type": "string", "pattern": "\\$\\{", "description": "A ${...} template, typed when it runs.",
            ],
            "duration": [
                "anyOf": [["type": "number", "exclusiveMinimum": 0], ["type": "string"]],
                "description": "Seconds, or a string such as \"30s\", \"5m\".",
            ],
            "size": .object(size.merging(["description": "Bytes, or a string such as \"8MiB\"."]) { $1 }),
            "patterns": ["anyOf": [["type": "string"], ["type": "array", "items": ["type": "string"]]]],
            "stage": .object(stage),
        ]
        return .object(root)
    }

    /// The schema of a section of the workflow file, from its grammar.
    private static func object(_ section: WorkflowGrammar.Section, stageTypes: [StageDescriptor]) -> JSONValue {
        var properties: [String: JSONValue] = [:]
        for member in section.members {
            var property = schema(for: member.kind, stageTypes: stageTypes).objectValue ?? [:]
            property["description"] = .string(member.summary(among: stageTypes))
            properties[member.name] = .object(property)
        }
        var object: [String: JSONValue] = [
            "type": "object", "additionalProperties": false, "properties": .object(properties),
        ]
        let required = section.members.filter(\.isRequired).map { JSONValue.string($0.name) }
        if !required.isEmpty { object["required"] = .array(required) }
        return .object(object)
    }

    private static func schema(for kind: WorkflowGrammar.Kind, stageTypes: [StageDescriptor]) -> JSONValue {
        switch kind {
        case .string: ["type": "string"]
        case .matching(let pattern): ["type": "string", "pattern": .string(pattern)]
        case .version: ["const": .int(Workflow.formatVersion)]
        case .boolean: ["type": "boolean"]
        case .integer(let range):
            ["type": "integer", "minimum": .int(range.lowerBound), "maximum": .int(range.upperBound)]
        case .number(let range):
            ["type": "number", "minimum": .double(range.lowerBound), "maximum": .double(range.upperBound)]
        case .duration: ["$ref": "#/$defs/duration"]
        case .size: .object(size)
        case .choice(let values): ["enum": .array(values.map { .string($0) })]
        case .patterns: ["$ref": "#/$defs/patterns"]
        case .condition: ["type": ["string", "boolean"]]
        case .strings: ["type": "array", "items": ["type": "string"]]
        case .options: ["type": "object"]
        case .identifierKeys: ["type": "object", "propertyNames": ["pattern": .string(WorkflowGrammar.identifier)]]
        case .section(let section): object(section, stageTypes: stageTypes)
        case .stages: ["type": "array", "minItems": 1, "items": ["$ref": "#/$defs/stage"]]
        case .list(let section): ["type": "array", "items": object(section, stageTypes: stageTypes)]
        }
    }

    /// A size: bytes, or a string such as `"8MiB"` (whose value a schema cannot bound).
    private static let size: [String: JSONValue] = ["anyOf": [["type": "integer", "minimum": 0], ["type": "string"]]]

    /// An option's schema with its field's bounds on the first choice (the number, or the array; a string such as
    /// `"8MiB"` or a template is checked by `pipeline validate`); nil when the field has none.
    private static func bounded(_ property: [String: JSONValue], by field: OptionField) -> [String: JSONValue]? {
        guard
            field.minimum != nil || field.maximum != nil || field.exclusiveMinimum != nil
                || field.minimumCount != nil
        else { return nil }
        var property = property
        if property["$ref"] == "#/$defs/size" { property = size }
        guard case .array(var choices)? = property["anyOf"], var first = choices.first?.objectValue else { return nil }
        if let count = field.minimumCount { first["minItems"] = .int(count) }
        if let minimum = field.minimum {
            first["minimum"] = JSONValue(bound: minimum)
            // A bit rate's own "more than 0" says nothing more next to a larger minimum.
            if let own = first["exclusiveMinimum"]?.doubleValue, own < minimum { first["exclusiveMinimum"] = nil }
        }
        if let above = field.exclusiveMinimum {
            first["exclusiveMinimum"] = JSONValue(bound: above)
            // A duration's own "0 or more" says nothing more next to "more than 0".
            if field.minimum == nil, let own = first["minimum"]?.doubleValue, own <= above { first["minimum"] = nil }
        }
        if let maximum = field.maximum { first["maximum"] = JSONValue(bound: maximum) }
        choices[0] = .object(first)
        property["anyOf"] = .array(choices)
        return property
    }

    /// The schema of one option type; values that are templates are accepted wherever a type is only
    /// known when the template is resolved.
    static func schema(for type: OptionType) -> JSONValue {
        let expression: JSONValue = ["$ref": "#/$defs/expression"]
        switch type {
        case .string: return ["type": "string"]
        case .integer: return ["anyOf": [["type": "integer"], expression]]
        case .number: return ["anyOf": [["type": "number"], expression]]
        case .boolean: return ["anyOf": [["type": "boolean"], expression]]
        case .size: return ["$ref": "#/$defs/size"]
        // Unlike a stage's timeout, an option may be zero: `segmentSeconds: 0` never segments, `at: 0` is the
        // first frame; `pipeline validate` accepts them, so editors must too.
        case .duration: return ["anyOf": [["type": "number", "minimum": 0], ["type": "string"]]]
        case .bitRate: return ["anyOf": [["type": "integer", "exclusiveMinimum": 0], ["type": "string"]]]
        case .oneOf(let values): return ["anyOf": [["enum": .array(values.map { .string($0) })], expression]]
        case .array(let element): return ["anyOf": [["type": "array", "items": schema(for: element)], expression]]
        case .dictionary(let value):
            return ["anyOf": [["type": "object", "additionalProperties": schema(for: value)], expression]]
        case .any: return [:]
        case .object(let options):
            var properties: [String: JSONValue] = [:]
            for field in options.fields {
                var property = schema(for: field.type).objectValue ?? [:]
                if let bounded = bounded(property, by: field) { property = bounded }
                property["description"] = .string(field.summary)
                if let value = field.defaultValue { property["default"] = value }
                properties[field.name] = .object(property)
            }
            var object: [String: JSONValue] = [
                "type": "object",
                "properties": .object(properties),
                "additionalProperties": options.additionalFields.map { schema(for: $0) } ?? false,
            ]
            let required = options.fields.filter(\.isRequired).map { JSONValue.string($0.name) }
            if !required.isEmpty { object["required"] = .array(required) }
            return ["anyOf": [.object(object), expression]]
        }
    }
}
