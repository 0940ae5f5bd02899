public import StageKit
/// The JSON Schema (draft 2020-12) of workflow files, generated from the same rules and stage option
/// schemas the loader checks, so editors and `pipeline validate` agree.
public enum WorkflowSchema {
    /// The schema for the stage types in `registry`.
    public static func generate(registry: StageRegistry) -> JSONValue {
        let identifier = "^[A-Za-z_][A-Za-z0-9_-]{0,99}$"
        let stageTypes = registry.all
        let perType: [JSONValue] = stageTypes.map { descriptor in
            [
                "if": ["properties": ["uses": ["const": .string(descriptor.stageType)]], "required": ["uses"]],
                "then": ["properties": ["with": schema(for: .object(descriptor.optionSchema))]],
            ]
        }
        let stage: JSONValue = [
            "type": "object",
            "required": ["id", "uses"],
            "additionalProperties": false,
            "properties": [
                "id": ["type": "string", "pattern": .string(identifier), "not": ["enum": ["input", "vars", "env"]],
                       "description": "Unique id; later stages read its outputs as ${id.output}."],
                "uses": ["enum": .array(stageTypes.map { .string($0.stageType) }), "description": "The stage type (pipeline stages lists them)."],
                "with": ["type": "object", "description": "The stage's options; strings may contain ${...} templates."],
                "retry": ["$ref": "#/$defs/retry"],
                "timeout": ["$ref": "#/$defs/duration"],
                "if": ["type": ["string", "boolean"], "description": "Run the stage only when this condition is true, e.g. \"input.ext == 'mov'\"."],
                "refreshWith": ["type": "string", "description": "An earlier stage that renews credentials when this one gets a 401."],
                "secret": ["type": "boolean", "description": "The stage's outputs are secrets: never stored or logged; it runs again when needed."],
                "description": ["type": "string"],
            ],
            "allOf": .array(perType),
        ]
        return [
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "workflow.schema.json",
            "title": "media-pipeline workflow, version 1",
            "type": "object",
            "required": ["version", "stages"],
            "additionalProperties": false,
            "properties": [
                "$schema": ["type": "string"],
                "version": ["const": .int(Workflow.formatVersion)],
                "name": ["type": "string", "pattern": "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$", "description": "Names the run and its state folder."],
                "description": ["type": "string"],
                "inputs": [
                    "type": "object",
                    "required": ["path"],
                    "additionalProperties": false,
                    "properties": [
                        "path": ["type": "string", "minLength": 1, "description": "A file or folder."],
                        "include": ["$ref": "#/$defs/patterns"],
                        "exclude": ["$ref": "#/$defs/patterns"],
                        "recursive": ["type": "boolean"],
                    ],
                ],
                "vars": ["type": "object", "propertyNames": ["pattern": .string(identifier)]],
                "defaults": [
                    "type": "object",
                    "additionalProperties": false,
                    "properties": ["retry": ["$ref": "#/$defs/retry"], "timeout": ["$ref": "#/$defs/duration"]],
                ],
                "plugins": ["type": "array", "items": ["type": "string"]],
                "stages": ["type": "array", "minItems": 1, "items": ["$ref": "#/$defs/stage"]],
                "onCancel": ["type": "array", "minItems": 1, "items": ["$ref": "#/$defs/stage"],
                             "description": "Stages `pipeline cancel` runs to undo an item's remote side effects."],
            ],
            "$defs": [
                "expression": ["type": "string", "pattern": "\\$\\{", "description": "A ${...} template, typed when it runs."],
                "duration": ["anyOf": [["type": "number", "exclusiveMinimum": 0], ["type": "string"]],
                             "description": "Seconds, or a string such as \"30s\", \"5m\"."],
                "size": ["anyOf": [["type": "integer", "minimum": 0], ["type": "string"]],
                         "description": "Bytes, or a string such as \"8MiB\"."],
                "patterns": ["anyOf": [["type": "string"], ["type": "array", "items": ["type": "string"]]]],
                "retry": [
                    "type": "object",
                    "additionalProperties": false,
                    "properties": [
                        "attempts": ["type": "integer", "minimum": 1, "maximum": 1000],
                        "initialDelay": ["$ref": "#/$defs/duration"],
                        "maxDelay": ["$ref": "#/$defs/duration"],
                        "multiplier": ["type": "number", "minimum": 1, "maximum": 100],
                    ],
                ],
                "stage": stage,
            ],
        ]
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
        case .duration: return ["$ref": "#/$defs/duration"]
        case .bitRate: return ["anyOf": [["type": "integer", "exclusiveMinimum": 0], ["type": "string"]]]
        case .oneOf(let values): return ["anyOf": [["enum": .array(values.map { .string($0) })], expression]]
        case .array(let element): return ["anyOf": [["type": "array", "items": schema(for: element)], expression]]
        case .dictionary(let value): return ["anyOf": [["type": "object", "additionalProperties": schema(for: value)], expression]]
        case .any: return [:]
        case .object(let options):
            var properties: [String: JSONValue] = [:]
            for field in options.fields {
                var property = schema(for: field.type).objectValue ?? [:]
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
