/// Options that several stages take, declared once in a ``StageOptions`` type of their own and embedded in each
/// stage's options, as swift-argument-parser's `@OptionGroup` embeds `ParsableArguments`:
///
/// ```swift
/// struct Connection: StageOptions {
///     @Option("The API's base URL.") var api = "https://api.example.com"
///     @Option("Bearer token; use ${env.…} so it stays secret.") var token: String
///     init() {}
/// }
///
/// struct Options: StageOptions {
///     @OptionGroup var connection: Connection
///     @Option("The video's URI.") var uri: String
///     init() {}
/// }
/// ```
///
/// The group's options stand in the stage's `with` beside the others (`{"token": "…", "uri": "…"}`), and its
/// schema lists them in the group's place, so a workflow, `pipeline stages` and `pipeline validate` see no
/// group at all: only the code shares them. A group may embed groups of its own; an object of options
/// (``NestedOptions``) embeds none, since its value is also encoded (as a default).
@propertyWrapper
public struct OptionGroup<Group: StageOptions>: Sendable, Decodable, OptionGroupDeclaration {
    /// The group's options.
    public var wrappedValue: Group

    /// Embeds the group.
    public init() {
        wrappedValue = Group()
    }

    /// Decodes the group's options, which `OptionSchema.grouping(_:)` put under the group's property name.
    public init(from decoder: any Decoder) throws {
        wrappedValue = try Group(from: decoder)
    }

    var groupSchema: OptionSchema { Group.optionSchema }
}

/// The schema side of an `@OptionGroup` property, read through reflection.
protocol OptionGroupDeclaration {
    /// The group's options, its own groups included.
    var groupSchema: OptionSchema { get }
}

extension OptionSchema {
    /// `with` as the options' types decode it: the options of each group also under the group's property name.
    /// The flat members stay, so a group's option never hides another's.
    package func grouping(_ with: JSONValue) -> JSONValue {
        guard case .object(var members) = with else { return with }
        for (name, group) in groups {
            let names = Set(group.fields.map(\.name))
            members[name] = group.grouping(.object(members.filter { names.contains($0.key) }))
        }
        return .object(members)
    }

    /// A decoding error's path as the workflow writes it: without the group property names that ``grouping(_:)``
    /// added.
    package func flattening(_ path: [any CodingKey]) -> [any CodingKey] {
        guard let first = path.first, first.intValue == nil, let group = groups[first.stringValue] else { return path }
        return group.flattening(Array(path.dropFirst()))
    }
}
