/// What a stage produces, declared once: each `@Output` property carries its name and summary, and the schema
/// that `pipeline validate` checks `${id.output}` references against, `pipeline stages` lists and a plugin
/// registers is read from them, as the options' schema is read from `@Option`.
///
/// ```swift
/// struct Outputs: StageOutputs {
///     @Output("The copy's path.") var path = ""
///     @Output("Its size in bytes.") var size: Int64 = 0
///     @Output("The receipt file.", whenGiven: "receipt") var receipt: String? = nil   // absent when nil
/// }
///
/// return Outputs(path: copy.path, size: size)
/// ```
///
/// Every output has an initial value, so the type has `init()` (the instance the schema is read from) and a
/// memberwise initializer for `run` to return. A public type declares `public init() {}`, which the protocol
/// needs public, and `run` builds it with ``with(_:)``. The outputs are encoded from the same declarations: a stored
/// property that is neither an `@Output` nor an `@OutputGroup` fails the stage rather than become an output
/// that no schema names. An optional output that is nil is left out of the JSON.
public protocol StageOutputs: Encodable, Sendable {
    /// An instance whose properties hold their declarations (the schema is read from it).
    init()
    /// The outputs: derived from the `@Output` and `@OutputGroup` properties unless a type says otherwise.
    static var outputSchema: OutputSchema { get }
}

extension StageOutputs {
    /// The outputs read from the declarations of `Self()`, in declaration order, each group's in its place.
    public static var outputSchema: OutputSchema {
        var schema = OutputSchema([])
        for (name, declaration) in OutputDeclarations.children(of: Self()) {
            switch declaration {
            case .output(let output): schema.fields.append(output.field(named: name))
            case .group(let group):
                let members = group.groupSchema
                schema.fields += members.fields
                schema.isOpen = schema.isOpen || members.isOpen
            case .undeclared: continue
            }
        }
        return schema
    }

    /// Outputs built by setting them on a fresh instance, as swift-protobuf's `Message.with` builds a message: the
    /// way to build a public outputs type, whose `public init()` takes the place of the memberwise initializer.
    public static func with(_ populate: (inout Self) throws -> Void) rethrows -> Self {
        var outputs = Self()
        try populate(&outputs)
        return outputs
    }

    /// Encodes every declared output under its name, the groups' outputs beside them; an absent optional is left
    /// out.
    public func encode(to encoder: any Encoder) throws {
        var members: [String: any Encodable] = [:]
        for (name, declaration) in OutputDeclarations.children(of: self) {
            switch declaration {
            case .output(let output):
                if let value = output.presentValue { members[name] = value }
            case .group(let group):
                guard case .object(let outputs) = try JSONValue(encoding: group.groupValue) else {
                    throw EncodingError.invalidValue(
                        group.groupValue,
                        .init(codingPath: encoder.codingPath, debugDescription: "output group \(name) is not an object")
                    )
                }
                for (member, value) in outputs { members[member] = value }
            case .undeclared(let value):
                throw EncodingError.invalidValue(
                    value,
                    .init(
                        codingPath: encoder.codingPath,
                        debugDescription:
                            "\(Self.self).\(name) is not declared with @Output: every output has a summary"))
            }
        }
        var container = encoder.container(keyedBy: OutputKey.self)
        for (name, value) in members { try container.encode(value, forKey: OutputKey(name)) }
    }
}

/// One output of a stage: its summary, and the value `run` gives it (the initial value is what the memberwise
/// initializer defaults to). With `whenGiven`, the output exists only when the workflow gives that option, and
/// `pipeline validate` refuses a reference to it otherwise.
@propertyWrapper
public struct Output<Value: Encodable & Sendable>: Sendable, OutputDeclaration {
    /// The output's value.
    public var wrappedValue: Value
    private let summary: String
    private let option: String?

    /// Declares an output with its summary for people and, for an output that exists only with an option, the
    /// option's name.
    public init(wrappedValue: Value, _ summary: String, whenGiven option: String? = nil) {
        self.wrappedValue = wrappedValue
        self.summary = summary
        self.option = option
    }

    var presentValue: (any Encodable)? {
        if let optional = wrappedValue as? any AbsentOutput, optional.isNone { return nil }
        return wrappedValue
    }

    func field(named name: String) -> OutputField {
        OutputField(name, summary, whenGiven: option)
    }
}

extension Output: Decodable where Value: Decodable {
    /// Decodes the value (outputs a stage reads back from its checkpoint); declarations are not part of the JSON.
    public init(from decoder: any Decoder) throws {
        self.init(wrappedValue: try Value(from: decoder), "")
    }
}

extension KeyedDecodingContainer {
    /// An absent optional output decodes as nil rather than as a missing key.
    public func decode<Value: Decodable>(_ type: Output<Value>.Type, forKey key: Key) throws -> Output<Value> {
        if !contains(key),
            let absent = (Value.self as? any ExpressibleByNilLiteral.Type)?.init(nilLiteral: ()) as? Value
        {
            return Output(wrappedValue: absent, "")
        }
        return Output(wrappedValue: try decode(Value.self, forKey: key), "")
    }
}

/// Outputs that several stages produce (an uploaded object's bucket, key and URL), declared once in a
/// ``StageOutputs`` type of their own and embedded in each stage's outputs. The group's outputs stand beside the
/// stage's own in the JSON and in the schema: only the code shares them.
@propertyWrapper
public struct OutputGroup<Group: StageOutputs>: Sendable, OutputGroupDeclaration {
    /// The group's outputs.
    public var wrappedValue: Group

    /// Embeds the group.
    public init(wrappedValue: Group) {
        self.wrappedValue = wrappedValue
    }

    var groupSchema: OutputSchema { Group.outputSchema }
    var groupValue: any Encodable { wrappedValue }
}

/// The schema side of an `@Output` property, read through reflection.
protocol OutputDeclaration {
    /// The value, or nil for an optional's nil.
    var presentValue: (any Encodable)? { get }
    func field(named name: String) -> OutputField
}

/// The schema side of an `@OutputGroup` property, read through reflection.
protocol OutputGroupDeclaration {
    var groupSchema: OutputSchema { get }
    var groupValue: any Encodable { get }
}

/// How an outputs type's stored properties are declared.
enum OutputDeclarations {
    enum Declaration {
        case output(any OutputDeclaration)
        case group(any OutputGroupDeclaration)
        /// A plain stored property: no output can come from it.
        case undeclared(Any)
    }

    /// The stored properties of `outputs` by name (without a property wrapper's `_`).
    static func children(of outputs: some StageOutputs) -> [(String, Declaration)] {
        Mirror(reflecting: outputs).children.compactMap { child in
            guard let label = child.label else { return nil }
            let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
            if let output = child.value as? any OutputDeclaration { return (name, .output(output)) }
            if let group = child.value as? any OutputGroupDeclaration { return (name, .group(group)) }
            return (name, .undeclared(child.value))
        }
    }
}

/// An optional, whose nil is left out of the outputs.
private protocol AbsentOutput {
    var isNone: Bool { get }
}

extension Optional: AbsentOutput {
    fileprivate var isNone: Bool { self == nil }
}

/// An output's name as a coding key.
private struct OutputKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) {
        stringValue = name
    }

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        nil
    }
}

extension JSONValue: StageOutputs {
    /// Any member names: for stages whose outputs the workflow names (`set`, the picks of `http.request`).
    public static var outputSchema: OutputSchema { OutputSchema([], isOpen: true) }
}

extension OutputSchema {
    /// The outputs for a workflow's `with` object: without those that exist only with an option it leaves out.
    public func given(_ with: JSONValue) -> OutputSchema {
        OutputSchema(fields.filter { field in field.option.map { with[$0] != nil } ?? true }, isOpen: isOpen)
    }
}
