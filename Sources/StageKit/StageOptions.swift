/// A stage's options, declared once: each `@Option` property carries its name, type, default and summary,
/// and the schema that `pipeline validate`, `pipeline stages` and `pipeline schema` use is read from them.
///
/// ```swift
/// struct Options: StageOptions {
///     @Option("The file to upload.") var file: String               // required
///     @Option("Parts in flight at once.") var concurrency = 4        // default 4
///     @Option("Content-Type (default: from the extension).") var contentType: String?   // optional
///     init() {}
/// }
/// ```
///
/// The engine fills in every default before decoding, so `run` sees `concurrency == 4` when the workflow
/// leaves it out, exactly as the schema says; there is no second place where a default could differ.
public protocol StageOptions: Decodable, Sendable {
    /// An instance whose `@Option` properties hold their declarations (the schema is read from it).
    init()
    /// The options: derived from the `@Option` properties unless a type says otherwise.
    static var optionSchema: OptionSchema { get }
    /// Problems in a `with` object that the options' types and bounds cannot state (an `exec` command whose
    /// program is an empty string), so `pipeline validate` refuses literal values before anything runs rather than
    /// every item failing in the stage. The same rules run on the resolved values before the stage runs
    /// (``Stage/decodeOptions(_:schema:)``, defaults filled in): skip a value that is not of the option's type
    /// (an unresolved `${...}` in a workflow), it is checked once it is resolved. None by default.
    static func problems(in with: JSONValue) -> [OptionProblem]
}

/// A problem in a stage's literal options, found before anything runs.
public struct OptionProblem: Sendable, Hashable {
    /// Where, from the stage's `with` object (`command[0]`).
    public var path: JSONPath
    /// What is wrong, and what to write instead.
    public var message: String
    /// What of the declaration the value breaks, when the declaration's checker found it; nil for a problem
    /// that ``StageOptions/problems(in:)`` finds.
    package var check: OptionCheck?

    /// Creates a problem.
    public init(at path: JSONPath, _ message: String) {
        self.path = path
        self.message = message
    }

    /// A problem the declaration's checker found (``OptionSchema/problems(in:resolvedLater:)``).
    package init(at path: JSONPath, _ message: String, check: OptionCheck) {
        self.path = path
        self.message = message
        self.check = check
    }
}

/// What of an option's declaration a value breaks.
package enum OptionCheck: Sendable, Hashable {
    /// Its type, a choice, or a required option left out. A run leaves these to decoding, which reads a resolved
    /// value as leniently as its type allows (a number as a command's text).
    case type
    /// Its name: no option is called so.
    case name
    /// A declared minimum or maximum.
    case bounds
    /// A declared fewest number of elements.
    case count

    /// Whether a run refuses a resolved value that breaks it: the declared limits are checked wherever a stage
    /// runs, since a template's value is known only then.
    package var isCheckedAtRunTime: Bool { self == .bounds || self == .count }
}

extension StageOptions {
    /// The options read from the `@Option` properties of `Self()`, in declaration order, each `@OptionGroup`'s
    /// options in its place. A property's name is its name in `with`.
    public static var optionSchema: OptionSchema {
        var schema = OptionSchema([])
        for child in Mirror(reflecting: Self()).children {
            guard let label = child.label else { continue }
            let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
            if let declaration = child.value as? any OptionDeclaration {
                schema.fields.append(declaration.field(named: name))
            } else if let group = child.value as? any OptionGroupDeclaration {
                let members = group.groupSchema
                schema.fields += members.fields
                schema.groups[name] = members
            }
        }
        return schema
    }

    public static func problems(in with: JSONValue) -> [OptionProblem] { [] }
}

/// A type an option can have, and how it reads in the schema.
public protocol OptionValue: Codable, Sendable {
    /// The type in the schema.
    static var optionType: OptionType { get }
    /// The value of an absent option that has no default: nil for optionals; nothing (the option is
    /// required) for every other type.
    static var absentValue: Self? { get }
    /// Whether this is an optional's nil, which is left out of encoded options.
    var isAbsent: Bool { get }
}

extension OptionValue {
    public static var absentValue: Self? { nil }
    public var isAbsent: Bool { false }
}

extension String: OptionValue {
    public static var optionType: OptionType { .string }
}

extension Int: OptionValue {
    public static var optionType: OptionType { .integer }
}

extension Int32: OptionValue {
    public static var optionType: OptionType { .integer }
}

extension Int64: OptionValue {
    public static var optionType: OptionType { .integer }
}

extension Double: OptionValue {
    public static var optionType: OptionType { .number }
}

extension Bool: OptionValue {
    public static var optionType: OptionType { .boolean }
}

extension ByteCount: OptionValue {
    public static var optionType: OptionType { .size }
}

extension TimeSpan: OptionValue {
    public static var optionType: OptionType { .duration }
}

extension BitRate: OptionValue {
    public static var optionType: OptionType { .bitRate }
}

extension JSONValue: OptionValue {
    public static var optionType: OptionType { .any }
}

extension Array: OptionValue where Element: OptionValue {
    public static var optionType: OptionType { .array(Element.optionType) }
}

extension Dictionary: OptionValue where Key == String, Value: OptionValue {
    public static var optionType: OptionType { .dictionary(Value.optionType) }
}

extension Optional: OptionValue where Wrapped: OptionValue {
    public static var optionType: OptionType { Wrapped.optionType }
    public static var absentValue: Self? { .some(nil) }
    public var isAbsent: Bool { self == nil }
}

/// An option whose value is one of a fixed set of strings: a `String` enum.
///
/// ```swift
/// enum Checksum: String, OptionChoice { case crc32c, sha256, none }
/// ```
public protocol OptionChoice: OptionValue, RawRepresentable<String>, CaseIterable {}

extension OptionChoice {
    public static var optionType: OptionType { .oneOf(allCases.map(\.rawValue)) }
}

/// An option that is itself an object of options (`video: { codec, crf }`).
public protocol NestedOptions: OptionValue, StageOptions {}

extension NestedOptions {
    public static var optionType: OptionType { .object(optionSchema) }
}

/// The schema side of an `@Option` property, read through reflection.
protocol OptionDeclaration {
    func field(named name: String) -> OptionField
}

/// Declares one option of a stage: its summary, and its default as the property's initial value.
///
/// A property with an initial value has that default; an optional property without one is nil when
/// absent; any other property is required.
@propertyWrapper
public struct Option<Value: OptionValue>: Sendable, Codable, OptionDeclaration {
    fileprivate var value: Value?
    private let summary: String
    private let hasDefault: Bool
    private let bounds: Bounds

    /// What a value must keep to besides its type (``OptionField``'s bounds): `pipeline validate` checks a literal,
    /// and every run the resolved value, so a stage never checks them again.
    private struct Bounds: Sendable {
        var minimum: Double?
        var maximum: Double?
        var exclusiveMinimum: Double?
        var minimumCount: Int?
    }

    /// The option's value (the default when the workflow leaves it out).
    public var wrappedValue: Value {
        get {
            guard let value else {
                preconditionFailure("required option read from a declaration instance; decode the options first")
            }
            return value
        }
        set { value = newValue }
    }

    /// An option with a default. A number, size (bytes), duration (seconds) or bit rate (bits per second) option
    /// may give its bounds (`exclusiveMinimum`: the value must be greater), an array option the fewest elements it
    /// works with: `pipeline validate` refuses a literal outside them and a run a resolved value, so `run` can rely
    /// on them.
    public init(
        wrappedValue: Value, _ summary: String, minimum: Double? = nil, maximum: Double? = nil,
        exclusiveMinimum: Double? = nil, minimumCount: Int? = nil
    ) {
        self.value = wrappedValue
        self.summary = summary
        self.hasDefault = true
        self.bounds = Bounds(
            minimum: minimum, maximum: maximum, exclusiveMinimum: exclusiveMinimum, minimumCount: minimumCount)
    }

    /// An option without a default: required, unless its type is optional; bounds as for an option with one.
    public init(
        _ summary: String, minimum: Double? = nil, maximum: Double? = nil, exclusiveMinimum: Double? = nil,
        minimumCount: Int? = nil
    ) {
        self.value = Value.absentValue
        self.summary = summary
        self.hasDefault = false
        self.bounds = Bounds(
            minimum: minimum, maximum: maximum, exclusiveMinimum: exclusiveMinimum, minimumCount: minimumCount)
    }

    /// Decodes the value; declarations are not part of the JSON.
    public init(from decoder: any Decoder) throws {
        self.value = try Value(from: decoder)
        self.summary = ""
        self.hasDefault = false
        self.bounds = Bounds()
    }

    /// Encodes the value.
    public func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }

    func field(named name: String) -> OptionField {
        // An optional's nil is no default: the option is simply absent.
        let defaultValue = hasDefault ? value.flatMap { $0.isAbsent ? nil : try? JSONValue(encoding: $0) } : nil
        return OptionField(
            name, Value.optionType, required: !hasDefault && Value.absentValue == nil, default: defaultValue,
            minimum: bounds.minimum, maximum: bounds.maximum, exclusiveMinimum: bounds.exclusiveMinimum,
            minimumCount: bounds.minimumCount, summary)
    }
}

extension KeyedDecodingContainer {
    /// An absent optional option decodes as nil rather than as a missing key.
    public func decode<Value>(_ type: Option<Value>.Type, forKey key: Key) throws -> Option<Value> {
        // Present (null included, which a JSONValue option may hold): decode the value itself.
        if contains(key) { return try Option<Value>(from: superDecoder(forKey: key)) }
        guard let absent = Value.absentValue else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "option \(key.stringValue) is required"))
        }
        var option = Option<Value>("")
        option.wrappedValue = absent
        return option
    }
}

extension KeyedEncodingContainer {
    /// An option is encoded like the plain value it holds; an absent optional is left out.
    public mutating func encode<Value>(_ option: Option<Value>, forKey key: Key) throws {
        guard let value = option.value, !value.isAbsent else { return }
        try encode(value, forKey: key)
    }
}

extension JSONValue: StageOptions {
    /// An empty object.
    public init() { self = .object([:]) }

    /// Any member names with values of any type: for stages that take the whole `with` object as it is.
    public static var optionSchema: OptionSchema { OptionSchema(additionalFields: .any) }
}

extension OptionSchema {
    /// `with` with the default of every absent option filled in, also inside nested option objects and in each
    /// element of an array of them.
    public func applyingDefaults(to with: JSONValue) -> JSONValue {
        guard case .object(var members) = with else { return with }
        for field in fields {
            if let present = members[field.name] {
                switch (field.type, present) {
                case (.object(let nested), _): members[field.name] = nested.applyingDefaults(to: present)
                case (.array(.object(let nested)), .array(let elements)):
                    members[field.name] = .array(elements.map(nested.applyingDefaults(to:)))
                default: break
                }
            } else if let defaultValue = field.defaultValue {
                members[field.name] = defaultValue
            }
        }
        return .object(members)
    }
}
