/// A step of a workflow: `ffmpeg.transcode`, `tus.upload`, `exec`, or one of your own.
///
/// A stage is a small value type. The engine creates it with `init()`, decodes the workflow's resolved
/// `with` object into ``Options``, calls ``run(_:context:)``, and stores the ``Outputs`` in the item's
/// checkpoint so that later stages can reference them as `${id.output}` and a rerun never repeats it.
///
/// ```swift
/// struct Checksum: Stage {
///     struct Options: Decodable, Sendable { var file: String }
///     struct Outputs: Encodable, Sendable { var sha256: String }
///     static let type = "checksum.sha256"
///     static let summary = "Computes the SHA-256 of a file."
///     static let optionSchema = OptionSchema([.init("file", .string, required: true, "File to hash.")])
///     static let outputSchema = OutputSchema([.init("sha256", "Hex digest.")])
///     init() {}
///     func run(_ options: Options, context: StageContext) async throws -> Outputs { ... }
/// }
/// ```
public protocol Stage: Sendable {
    /// The decoded `with` object.
    associatedtype Options: Decodable & Sendable
    /// What the stage produces; encoded to a JSON object.
    associatedtype Outputs: Encodable & Sendable

    /// The name workflows use in `uses`, e.g. `"exec"` or `"acme.watermark"`.
    static var type: String { get }
    /// One line for `pipeline stages`.
    static var summary: String { get }
    /// The options, checked by `pipeline validate` before anything runs.
    static var optionSchema: OptionSchema { get }
    /// The outputs, so references to them can be checked.
    static var outputSchema: OutputSchema { get }
    /// The outputs for a particular `with` object, for stages whose outputs the workflow declares.
    static func outputSchema(for with: JSONValue) -> OutputSchema

    /// Creates the stage.
    init()

    /// Does the work for one item. Throw an error conforming to ``ClassifiedError`` to say whether a
    /// retry can help; other errors are fatal. Check cancellation at least once per second of work.
    func run(_ options: Options, context: StageContext) async throws -> Outputs
}

extension Stage {
    /// By default the outputs do not depend on the options.
    public static func outputSchema(for with: JSONValue) -> OutputSchema { outputSchema }
}

/// Where a registered stage type comes from, as `pipeline stages` shows it.
public enum StageSource: Sendable, Hashable, CustomStringConvertible {
    /// Shipped with `pipeline`.
    case builtIn
    /// Compiled into a custom `pipeline` executable.
    case compiledIn
    /// Loaded from a plugin library at this path.
    case plugin(String)

    public var description: String {
        switch self {
        case .builtIn: "built in"
        case .compiledIn: "compiled in"
        case .plugin(let path): "plugin \(path)"
        }
    }
}

/// A registered stage type with its types erased, as the runner uses it.
public struct StageDescriptor: Sendable {
    /// The `uses` name.
    public var type: String
    /// One line for people.
    public var summary: String
    /// The options.
    public var optionSchema: OptionSchema
    /// The outputs in general.
    public var outputSchema: OutputSchema
    /// Where it comes from.
    public var source: StageSource
    let outputsForOptions: @Sendable (JSONValue) -> OutputSchema
    let body: @Sendable (JSONValue, StageContext) async throws -> JSONValue

    /// Describes a stage type.
    public init<S: Stage>(_ stage: S.Type, source: StageSource) {
        self.type = S.type
        self.summary = S.summary
        self.optionSchema = S.optionSchema
        self.outputSchema = S.outputSchema
        self.source = source
        self.outputsForOptions = { S.outputSchema(for: $0) }
        self.body = { options, context in
            let decoded: S.Options
            do {
                decoded = try options.decode(as: S.Options.self)
            } catch let error as DecodingError {
                throw StageFailure.invalidOptions(error)
            }
            let outputs = try await S().run(decoded, context: context)
            let json = try JSONValue(encoding: outputs)
            guard case .object = json else {
                throw StageFailure("stage \(S.type) returned \(json.kindName) as outputs; outputs must be an object")
            }
            return json
        }
    }

    /// Describes a stage type whose work is done elsewhere (a plugin across a C boundary): `run` gets the
    /// resolved options and returns the outputs object.
    public init(
        type: String, summary: String, optionSchema: OptionSchema, outputSchema: OutputSchema, source: StageSource,
        outputs: @escaping @Sendable (JSONValue) -> OutputSchema,
        run: @escaping @Sendable (JSONValue, StageContext) async throws -> JSONValue
    ) {
        self.type = type
        self.summary = summary
        self.optionSchema = optionSchema
        self.outputSchema = outputSchema
        self.source = source
        self.outputsForOptions = outputs
        self.body = run
    }

    /// The outputs the stage declares for this `with` object.
    public func outputs(for with: JSONValue) -> OutputSchema {
        outputsForOptions(with)
    }

    /// Runs the stage with resolved options.
    public func run(options: JSONValue, context: StageContext) async throws -> JSONValue {
        try await body(options, context)
    }
}
