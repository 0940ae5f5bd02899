/// The type of a stage option, used to check workflows before anything runs and to document stages.
public indirect enum OptionType: Sendable, Hashable, Codable {
    case string
    case integer
    case number
    case boolean
    /// Bytes: a number or a string such as `"8MiB"`.
    case size
    /// Seconds: a number or a string such as `"30s"`.
    case duration
    /// Bits per second: a number or a string such as `"2500k"`.
    case bitRate
    /// One of a fixed set of strings.
    case oneOf([String])
    case array(OptionType)
    /// An object with known members.
    case object(OptionSchema)
    /// An object with any member names whose values have one type.
    case dictionary(OptionType)
    case any

    /// How the type reads in `pipeline stages` and in messages.
    public var displayName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .number: "number"
        case .boolean: "boolean"
        case .size: "size"
        case .duration: "duration"
        case .bitRate: "bit rate"
        case .oneOf(let values): values.map { "\"\($0)\"" }.joined(separator: " | ")
        case .array(let element): "[\(element.displayName)]"
        case .object: "object"
        case .dictionary(let value): "{string: \(value.displayName)}"
        case .any: "any"
        }
    }
}

/// One documented option of a stage.
public struct OptionField: Sendable, Hashable, Codable {
    /// The option's name in `with`.
    public var name: String
    /// Its type.
    public var type: OptionType
    /// Whether a workflow must give it.
    public var isRequired: Bool
    /// One line for people.
    public var summary: String
    /// The value used when the option is absent, for documentation.
    public var defaultValue: JSONValue?
    /// The smallest value of a number, size (bytes), duration (seconds) or bit rate (bits per second) option, when
    /// it has one: `pipeline validate` refuses a smaller literal before anything runs, rather than every item
    /// failing in the stage, and a run refuses a smaller resolved value before the stage starts.
    public var minimum: Double?
    /// The largest value, when it has one.
    public var maximum: Double?
    /// A value the option must be greater than, when zero itself is wrong (a timeout of 0 would end every
    /// attempt at once).
    public var exclusiveMinimum: Double?
    /// The fewest elements of an array option, when an empty one cannot work (a command needs its program).
    public var minimumCount: Int?

    /// Creates an option.
    public init(
        _ name: String, _ type: OptionType, required: Bool = false, default defaultValue: JSONValue? = nil,
        minimum: Double? = nil, maximum: Double? = nil, exclusiveMinimum: Double? = nil, minimumCount: Int? = nil,
        _ summary: String
    ) {
        self.name = name
        self.type = type
        self.isRequired = required
        self.summary = summary
        self.defaultValue = defaultValue
        self.minimum = minimum
        self.maximum = maximum
        self.exclusiveMinimum = exclusiveMinimum
        self.minimumCount = minimumCount
    }

    /// The bounds as people read them, in the units a workflow writes ("from 1 to 16", "of 0 or more",
    /// "from 5MiB to 5GiB", "of more than 0s", "of at least 1 element"); nil when the option has none.
    public var boundsDescription: String? {
        if let count = minimumCount { return "of at least \(count) \(count == 1 ? "element" : "elements")" }
        let text = { (bound: Double) in type.boundText(bound) }
        switch (minimum, exclusiveMinimum, maximum) {
        case (let low?, nil, let high?): return "from \(text(low)) to \(text(high))"
        case (let low?, nil, nil): return "of \(text(low)) or more"
        case (nil, let above?, let high?): return "of more than \(text(above)) and at most \(text(high))"
        case (nil, let above?, nil): return "of more than \(text(above))"
        case (nil, nil, let high?): return "of \(text(high)) or less"
        case (let low?, let above?, let high):
            let lower = "of \(text(low)) or more, more than \(text(above))"
            return high.map { "\(lower), at most \(text($0))" } ?? lower
        case (nil, nil, nil): return nil
        }
    }

    /// Whether `number` (bytes, seconds or bits per second for those types) lies within the bounds.
    public func admits(_ number: Double) -> Bool {
        number >= (minimum ?? -.infinity) && number <= (maximum ?? .infinity)
            && number > (exclusiveMinimum ?? -.infinity)
    }

    /// Whether an array of `count` elements has enough of them.
    public func admits(count: Int) -> Bool {
        count >= (minimumCount ?? 0)
    }
}

extension OptionType {
    /// A bound as a workflow would write a value of this type: sizes and bit rates in the largest unit that
    /// divides them (`5MiB`, `1k`), durations in whole days or hours, else seconds (`7d`, `0.5s`, `60s`), other
    /// numbers as they are.
    fileprivate func boundText(_ bound: Double) -> String {
        func plain(_ value: Double) -> String {
            value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
        }
        // The largest of `units` that divides the bound, else the bound in `unit`.
        func written(in units: [(String, Double)], otherwise unit: String) -> String {
            for (name, factor) in units where bound >= factor && (bound / factor).rounded() == bound / factor {
                return plain(bound / factor) + name
            }
            return plain(bound) + unit
        }
        switch self {
        case .size: return written(in: [("GiB", 1_073_741_824), ("MiB", 1_048_576), ("KiB", 1024)], otherwise: "")
        case .bitRate: return written(in: [("M", 1e6), ("k", 1e3)], otherwise: "")
        case .duration: return written(in: [("d", 86_400), ("h", 3600)], otherwise: "s")
        default: return plain(bound)
        }
    }
}

/// The options a stage accepts: what `validate` checks, `pipeline stages` lists and the JSON Schema
/// describes.
public struct OptionSchema: Sendable, Hashable, Codable {
    /// The known options.
    public var fields: [OptionField]
    /// The type of members not in ``fields``, when any name is allowed (nil: unknown names are errors).
    public var additionalFields: OptionType?
    /// The option groups whose options ``fields`` lists flat, by their property names in the options type. Only
    /// decoding that type needs them (``grouping(_:)``), so they are not part of the schema's JSON.
    package var groups: [String: OptionSchema] = [:]

    private enum CodingKeys: String, CodingKey {
        case fields, additionalFields
    }

    /// Creates a schema with known options only.
    public init(_ fields: [OptionField]) {
        self.fields = fields
        self.additionalFields = nil
    }

    /// Creates a schema that also accepts members of any name.
    public init(_ fields: [OptionField] = [], additionalFields: OptionType) {
        self.fields = fields
        self.additionalFields = additionalFields
    }

    /// The field with this name.
    public func field(named name: String) -> OptionField? {
        fields.first { $0.name == name }
    }
}

/// One documented output of a stage.
public struct OutputField: Sendable, Hashable, Codable {
    /// The output's name, as in `${stage.name}`.
    public var name: String
    /// One line for people.
    public var summary: String
    /// The option without which the output does not exist (``Output``'s `whenGiven`). The stage applies it
    /// itself (``OutputSchema/given(_:)``, across a plugin's boundary too), so it is not part of the JSON.
    package var option: String?

    private enum CodingKeys: String, CodingKey {
        case name, summary
    }

    /// Creates an output.
    public init(_ name: String, _ summary: String) {
        self.name = name
        self.summary = summary
    }

    /// Creates an output that exists only when the workflow gives `option`.
    package init(_ name: String, _ summary: String, whenGiven option: String?) {
        self.init(name, summary)
        self.option = option
    }
}

/// The outputs a stage produces, so `validate` can check `${stage.output}` references.
public struct OutputSchema: Sendable, Hashable, Codable {
    /// The outputs the stage produces; those declared `whenGiven` an option only when the workflow gives it.
    public var fields: [OutputField]
    /// Whether names not in ``fields`` may be referenced too (outputs that depend on the workflow).
    public var isOpen: Bool

    /// Creates an output schema.
    public init(_ fields: [OutputField], isOpen: Bool = false) {
        self.fields = fields
        self.isOpen = isOpen
    }

    /// Whether `${stage.name}` can be resolved.
    public func contains(_ name: String) -> Bool {
        isOpen || fields.contains { $0.name == name }
    }
}

extension JSONValue {
    /// An option's bound as JSON: an integer when it is a whole number, as an integer option's bounds read.
    package init(bound: Double) {
        self = bound.rounded() == bound && abs(bound) < 1e15 ? .int(Int(bound)) : .double(bound)
    }
}
