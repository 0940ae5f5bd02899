package import Foundation
package import Logging
import NIOConcurrencyHelpers
public import StageKit
package import StageRuntime

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
    public let stageType: String
    /// One line for people.
    public let summary: String
    /// The options.
    public var optionSchema: OptionSchema { schema.value }
    /// The outputs in general.
    public var outputSchema: OutputSchema { outputs.value }
    /// Where it comes from.
    public let source: StageSource
    /// What it mostly consumes.
    public let resource: StageResource
    /// Whether it reads the input file as media.
    public let readsMediaInput: Bool
    /// Whether the stage retries its own requests (``Stage/retriesItself``): the engine runs it once.
    public let retriesItself: Bool
    /// How it takes part in `"stream": true` (``Stage/streamRole``).
    public let streamRole: StreamRole
    /// The option that names the file it reads (``Stage/inputFileOption``); nil when it names none.
    public var inputFileOption: String? { fileOption.value }
    /// The output that says where its result landed (``Stage/landingOutput``); nil when it names none.
    public let landingOutput: String?
    /// Read on first use: reading a stage's schemas reflects over its options and outputs, and a command uses
    /// few of the registered stages.
    private let schema: Once<OptionSchema>
    private let outputs: Once<OutputSchema>
    /// Read on first use for the same reason: the default of ``Stage/inputFileOption`` looks for an option `file`.
    private let fileOption: Once<String?>
    private let outputsForOptions: @Sendable (JSONValue) -> OutputSchema
    private let problemsInOptions: @Sendable (JSONValue) -> [OptionProblem]
    private let body: @Sendable (JSONValue, StageContext) async throws -> JSONValue
    private let refusalToStream: @Sendable (JSONValue, InputSummary) -> String?
    /// ``Stage/destinations(in:)`` on decoded options; none for a stage type whose work is done elsewhere.
    private let destinationsOf: @Sendable (JSONValue) -> [String]
    /// ``StageRuntime/SegmentFarming/segmentEncoding(store:folder:logger:)``, for a stage type that farms segments.
    private let encodingOfSegments: (@Sendable (any SegmentStore, URL, Logger) async -> SegmentEncoding)?
    /// ``PlanDescribing/planNote(json:input:checkpoint:)``, for the stages that have one.
    private let noteForPlan: (@Sendable (JSONValue, String, JSONValue?) async -> String?)?

    /// Describes a stage type; a declaration the engine could not act on is refused (``StageDeclarationError``).
    ///
    /// The engine looks at a stage's input-file option only when the stage streams or reads media: only those types
    /// have their options read (and that declaration checked) now. The others' options are read when first needed,
    /// so that registering every stage a command might use does not reflect over all their options.
    public init<S: Stage>(_ stage: S.Type, source: StageSource) throws(StageDeclarationError) {
        self.stageType = S.stageType
        self.summary = S.summary
        let schema = Once { S.optionSchema }
        self.schema = schema
        let outputs = Once { S.outputSchema }
        self.outputs = outputs
        self.source = source
        self.resource = S.resource
        self.readsMediaInput = S.readsMediaInput
        self.retriesItself = S.retriesItself
        self.streamRole = S.streamRole
        let fileOption = Once<String?> { Self.named(S.inputFileOption) }
        self.fileOption = fileOption
        let landingOutput = Self.named(S.landingOutput)
        self.landingOutput = landingOutput
        let readsInputFile = S.streamRole != .none || S.readsMediaInput
        try Self.check(
            S.stageType, streamRole: S.streamRole, inputFileOption: readsInputFile ? fileOption.value : nil,
            landingOutput: landingOutput, options: readsInputFile ? schema.value : nil,
            outputs: landingOutput != nil ? outputs.value : OutputSchema([]))
        self.outputsForOptions = { S.outputSchema(for: $0) }
        self.problemsInOptions = { S.Options.problems(in: $0) }
        self.body = { options, context in try await S.run(json: options, context: context, schema: schema.value) }
        self.refusalToStream = { S.streamRefusal(with: $0, inputs: $1) }
        self.destinationsOf = { options in
            // Options that do not decode name nothing: the stage fails on them before it writes anything.
            (try? S.decodeOptions(options, schema: schema.value)).map(S.destinations(in:)) ?? []
        }
        if let describing = S.self as? any PlanDescribing.Type {
            self.noteForPlan = Self.planNote(of: describing)
        } else {
            self.noteForPlan = nil
        }
        if let farming = S.self as? any SegmentFarming.Type {
            self.encodingOfSegments = Self.segmentEncoding(of: farming)
        } else {
            self.encodingOfSegments = nil
        }
    }

    /// What ``segmentEncoding(store:folder:logger:)`` calls for a stage type that farms segments.
    private static func segmentEncoding<F: SegmentFarming>(
        of stage: F.Type
    ) -> @Sendable (any SegmentStore, URL, Logger) async -> SegmentEncoding {
        { store, folder, logger in await F.segmentEncoding(store: store, folder: folder, logger: logger) }
    }

    /// What ``planNote(options:input:checkpoint:)`` calls for a stage type that describes its plan.
    private static func planNote<D: PlanDescribing>(
        of stage: D.Type
    ) -> @Sendable (JSONValue, String, JSONValue?) async -> String? {
        { options, input, checkpoint in await D.planNote(json: options, input: input, checkpoint: checkpoint) }
    }

    /// Describes a stage type whose work is done elsewhere (a plugin across a C boundary), with everything
    /// the ``Stage`` protocol declares: `outputs` answers ``Stage/outputSchema(for:)``, and `run` gets the
    /// resolved options with their defaults filled in and returns the outputs object. Its declarations are checked
    /// as a compiled stage type's are (its options are at hand).
    package init(
        stageType: String, summary: String, optionSchema: OptionSchema, outputSchema: OutputSchema,
        source: StageSource, resource: StageResource, readsMediaInput: Bool, retriesItself: Bool,
        streamRole: StreamRole, inputFileOption: String?, landingOutput: String?,
        streamRefusal: @escaping @Sendable (JSONValue, InputSummary) -> String?,
        outputs: @escaping @Sendable (JSONValue) -> OutputSchema,
        run: @escaping @Sendable (JSONValue, StageContext) async throws -> JSONValue
    ) throws(StageDeclarationError) {
        let (inputFileOption, landingOutput) = (inputFileOption.flatMap(Self.named), landingOutput.flatMap(Self.named))
        try Self.check(
            stageType, streamRole: streamRole, inputFileOption: inputFileOption, landingOutput: landingOutput,
            options: optionSchema, outputs: outputSchema)
        self.init(
            elsewhere: stageType, summary: summary, optionSchema: optionSchema, outputSchema: outputSchema,
            source: source, resource: resource, readsMediaInput: readsMediaInput, retriesItself: retriesItself,
            streamRole: streamRole, inputFileOption: inputFileOption, landingOutput: landingOutput,
            streamRefusal: streamRefusal, outputs: outputs, run: run)
    }

    /// Describes a stage type that declares nothing about streaming, its input file or its result (a stage type a
    /// workflow names but no registry has): there is nothing to check.
    package init(
        stageType: String, summary: String, optionSchema: OptionSchema, outputSchema: OutputSchema,
        source: StageSource, resource: StageResource, readsMediaInput: Bool, retriesItself: Bool,
        outputs: @escaping @Sendable (JSONValue) -> OutputSchema,
        run: @escaping @Sendable (JSONValue, StageContext) async throws -> JSONValue
    ) {
        self.init(
            elsewhere: stageType, summary: summary, optionSchema: optionSchema, outputSchema: outputSchema,
            source: source, resource: resource, readsMediaInput: readsMediaInput, retriesItself: retriesItself,
            streamRole: .none, inputFileOption: nil, landingOutput: nil, streamRefusal: { _, _ in nil },
            outputs: outputs, run: run)
    }

    /// A stage type whose work is done elsewhere, its declarations checked (or none).
    private init(
        elsewhere stageType: String, summary: String, optionSchema: OptionSchema, outputSchema: OutputSchema,
        source: StageSource, resource: StageResource, readsMediaInput: Bool, retriesItself: Bool,
        streamRole: StreamRole, inputFileOption: String?, landingOutput: String?,
        streamRefusal: @escaping @Sendable (JSONValue, InputSummary) -> String?,
        outputs: @escaping @Sendable (JSONValue) -> OutputSchema,
        run: @escaping @Sendable (JSONValue, StageContext) async throws -> JSONValue
    ) {
        self.stageType = stageType
        self.summary = summary
        self.schema = Once { optionSchema }
        self.outputs = Once { outputSchema }
        self.source = source
        self.resource = resource
        self.readsMediaInput = readsMediaInput
        self.retriesItself = retriesItself
        self.streamRole = streamRole
        self.fileOption = Once { inputFileOption }
        self.landingOutput = landingOutput
        self.outputsForOptions = outputs
        self.problemsInOptions = { _ in [] }
        self.body = { options, context in try await run(optionSchema.applyingDefaults(to: options), context) }
        self.refusalToStream = streamRefusal
        self.destinationsOf = { _ in [] }
        self.noteForPlan = nil
        self.encodingOfSegments = nil
    }

    /// The outputs the stage declares for this `with` object.
    public func outputs(for with: JSONValue) -> OutputSchema {
        outputsForOptions(with)
    }

    /// The problems its options type finds in a workflow's literal `with` (``StageOptions/problems(in:)``).
    public func problems(in with: JSONValue) -> [OptionProblem] {
        problemsInOptions(with)
    }

    /// Why the stage cannot stream with a workflow's `with` on `inputs` (``Stage/streamRefusal(with:inputs:)``).
    public func streamRefusal(with: JSONValue, inputs: InputSummary) -> String? {
        refusalToStream(with, inputs)
    }

    /// The files the stage writes at paths the workflow chose, with resolved `options` (``Stage/destinations(in:)``),
    /// as the options give them.
    public func destinations(with options: JSONValue) -> [String] {
        destinationsOf(options)
    }

    /// How this machine encodes the segment units of this stage type's plans (``StageRuntime/SegmentFarming``);
    /// nil for a stage type that does not farm segments.
    package func segmentEncoding(store: any SegmentStore, folder: URL, logger: Logger) async -> SegmentEncoding? {
        await encodingOfSegments?(store, folder, logger)
    }

    /// Whether the stage says how it would run (``StageKit/PlanDescribing``).
    public var describesPlan: Bool { noteForPlan != nil }

    /// How the stage would run with resolved `options` on the item's file `input`, resuming from `checkpoint`, as
    /// its type says for `pipeline plan` (``PlanDescribing``); nil for a stage that says nothing.
    public func planNote(options: JSONValue, input: String, checkpoint: JSONValue?) async -> String? {
        await noteForPlan?(options, input, checkpoint)
    }

    /// Runs the stage with resolved options.
    package func run(options: JSONValue, context: StageContext) async throws -> JSONValue {
        try await body(options, context)
    }
}

/// What a stage type declares that is costly to read (its option schema, and what depends on it), made the first
/// time it is read and kept, shared by copies of the descriptor.
private final class Once<Value: Sendable>: Sendable {
    private let make: @Sendable () -> Value
    private let made = NIOLockedValueBox<Value?>(nil)

    init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
    }

    var value: Value {
        made.withLockedValue { made in
            if let made { return made }
            let value = make()
            made = value
            return value
        }
    }
}
