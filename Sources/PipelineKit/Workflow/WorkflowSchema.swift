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
            "size": [
                "anyOf": [["type": "integer", "minimum": 0], ["type": "string"]],
                "description": "Bytes, or a string such as \"8MiB\".",
            ],
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
            property["description"] = .string(member.summary)
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
        case .size: ["anyOf": [["type": "integer", "minimum": 0], ["type": "string"]]]
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

    /// A number option's schema (a number, or a template) with its field's `minimum` and `maximum` on the number;
    /// nil when the field has no bounds.
    private static func bounded(_ property: [String: JSONValue], by field: OptionField) -> [String: JSONValue]? {
        guard field.minimum != nil || field.maximum != nil, case .array(var choices)? = property["anyOf"],
            var number = choices.first?.objectValue
        else { return nil }
        if let minimum = field.minimum { number["minimum"] = JSONValue(bound: minimum) }
        if let maximum = field.maximum { number["maximum"] = JSONValue(bound: maximum) }
        choices[0] = .object(number)
        var property = property
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
