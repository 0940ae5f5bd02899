/// A step of a workflow: `ffmpeg.transcode`, `tus.upload`, `exec`, or one of your own.
///
/// A stage is a small value type. The engine creates it with `init()`, decodes the workflow's resolved
/// `with` object into ``Options`` (with every declared default filled in), calls ``run(_:context:)``,
/// and stores the ``Outputs`` in the item's checkpoint so that later stages can reference them as
/// `${id.output}` and a rerun never repeats it.
///
/// ```swift
/// struct Checksum: Stage {
///     struct Options: StageOptions {
///         @Option("File to hash.") var file: String
///         @Option("Bytes read at a time.") var blockSize: ByteCount = ByteCount(1 << 20)
///         init() {}
///     }
///     struct Outputs: StageOutputs {
///         @Output("Hex digest.") var sha256 = ""
///     }
///     static let stageType = "checksum.sha256"
///     static let summary = "Computes the SHA-256 of a file."
///     init() {}
///     func run(_ options: Options, context: StageContext) async throws -> Outputs { ... }
/// }
/// ```
public protocol Stage: Sendable {
    /// The decoded `with` object; its ``StageOptions/optionSchema`` is what `pipeline validate` checks and
    /// `pipeline stages` lists.
    associatedtype Options: StageOptions
    /// What the stage produces, encoded to a JSON object; its ``StageOutputs/outputSchema`` is what `pipeline
    /// validate` checks references against and `pipeline stages` lists.
    associatedtype Outputs: StageOutputs

    /// The name workflows use in `uses`, e.g. `"exec"` or `"acme.watermark"`.
    static var stageType: String { get }
    /// One line for `pipeline stages`.
    static var summary: String { get }
    /// The outputs in general: read from the declarations of ``Outputs`` (``StageOutputs/outputSchema``). Only a
    /// stage whose outputs are a `JSONValue` (any names) declares its own, to name the ones it always gives.
    static var outputSchema: OutputSchema { get }
    /// The outputs for a particular `with` object: ``outputSchema`` less the outputs given only with an option
    /// it leaves out. A stage whose outputs the workflow names (`set`, `http.request`'s `outputs`) adds those.
    static func outputSchema(for with: JSONValue) -> OutputSchema
    /// What the stage mostly consumes, so a run limits each resource on its own: `--cpu-jobs` encodes,
    /// `--transfers` uploads. Defaults to ``StageResource/light``.
    static var resource: StageResource { get }
    /// Whether the stage reads the input file as media: a run skips files FFmpeg cannot read, with the
    /// probe's reason, instead of failing them in this stage. Defaults to false.
    static var readsMediaInput: Bool { get }
    /// Whether the stage retries its own failed requests under ``StageContext/retryPolicy`` (an upload that
    /// resumes from the server's offset, part by part), telling the run through
    /// ``StageContext/retrying(attempt:after:because:)``. The engine then does not retry it again: one
    /// policy, one owner. Defaults to false: the engine retries the stage.
    static var retriesItself: Bool { get }
    /// How the stage takes part in `"stream": true`: it writes a file others may read as it is written, it
    /// reads one, or neither. Defaults to ``StreamRole/none``.
    static var streamRole: StreamRole { get }
    /// The option that names the file the stage reads, whose default is the input file: a run probes the input
    /// files for a media stage that reads them, and a follower streams the export this option references.
    /// Defaults to `"file"` when the stage has an option of that name, else ``noOption`` (the stage reads the
    /// input file, if any). A `String`, not a `String?`, so that `static let inputFileOption = "source"` is the
    /// declaration: a property of another type would not be this one, and the default would apply unseen.
    static var inputFileOption: String { get }
    /// The output that says where the stage's result landed (a URL or a path): a run reports the last one an
    /// item's stages gave, and a producer's is the file it writes. Defaults to the first of `link`, `url`,
    /// `location` and `path` among the outputs of ``outputSchema``, else ``noOutput`` (the stage lands nothing).
    /// A `String` for the same reason as ``inputFileOption``.
    static var landingOutput: String { get }
    /// Why this stage cannot stream with the workflow's `options` (its `with`, templates unresolved): for a
    /// follower, a configuration it cannot stream with; for any other stage, why it cannot follow an export at
    /// all; for a producer, why the export cannot be streamed with these options on `inputs`. Nil when it can.
    /// `validate` shows it. Defaults to nil (a stage that cannot follow gets a general reason).
    static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String?
    /// The files (or folders) the stage writes at paths the workflow chose with these `options`: a run refuses an
    /// item that would write one that another item writes (``ErrorKind/outputCollision``). Paths as the options
    /// give them; the engine puts them in one normal form. A file the stage makes where the engine says (its
    /// scratch folder) is none of these. Defaults to none.
    static func destinations(in options: Options) -> [String]

    /// Creates the stage.
    init()

    /// Does the work for one item. Throw an error conforming to ``ClassifiedError`` to say whether a
    /// retry can help and what kind of failure it is; other errors are fatal. Check cancellation at least
    /// once per second of work.
    func run(_ options: Options, context: StageContext) async throws -> Outputs
}

extension Stage {
    /// The options, as ``Options`` declares them.
    public static var optionSchema: OptionSchema { Options.optionSchema }

    /// The outputs, as ``Outputs`` declares them.
    public static var outputSchema: OutputSchema { Outputs.outputSchema }

    /// By default a stage is light work, limited only by the number of items at once.
    public static var resource: StageResource { .light }

    /// By default a stage does not need its input to be media.
    public static var readsMediaInput: Bool { false }

    /// By default the engine retries a stage.
    public static var retriesItself: Bool { false }

    /// By default the outputs depend on the options only through ``Output``'s `whenGiven`.
    public static func outputSchema(for with: JSONValue) -> OutputSchema { outputSchema.given(with) }

    /// Decodes resolved `with` options into ``Options``, after filling in every declared default. A value out of
    /// its declared bounds, or one that breaks ``StageOptions/problems(in:)``, is a fatal ``StageFailure`` of
    /// kind `invalid-options` in the words `pipeline validate` uses for a literal (a template's value is known
    /// only now); so is a value of the wrong type, naming the option. Hosts that run a stage often pass the
    /// schema they read once (reading it reflects over the declarations).
    public static func decodeOptions(_ with: JSONValue, schema: OptionSchema = optionSchema) throws -> Options {
        let resolved = schema.applyingDefaults(to: with)
        let problems =
            schema.problems(in: resolved).filter { $0.check?.isCheckedAtRunTime == true }
            + Options.problems(in: resolved)
        guard problems.isEmpty else { throw StageFailure.invalidOptions(problems) }
        do {
            return try schema.grouping(resolved).decode(as: Options.self)
        } catch let error as DecodingError {
            throw StageFailure.invalidOptions(error, in: schema)
        }
    }

    /// Runs the stage on resolved `with` options and returns its outputs as a JSON object: what every
    /// host (the engine, a plugin bridge, the harness) does with a stage.
    package static func run(
        json options: JSONValue, context: StageContext, schema: OptionSchema = optionSchema
    ) async throws -> JSONValue {
        let outputs = try await Self().run(try decodeOptions(options, schema: schema), context: context)
        let json = try JSONValue(encoding: outputs)
        guard case .object = json else {
            throw StageFailure("stage \(stageType) returned \(json.kindName) as outputs; outputs must be an object")
        }
        return json
    }
}

/// What a stage mostly consumes while it runs.
public enum StageResource: String, Sendable, Hashable, CaseIterable, Codable {
    /// Processor time: an encode, a thumbnail (`--cpu-jobs` at once).
    case cpu
    /// Bandwidth: an upload or a download (`--transfers` at once).
    case network
    /// Requests to a platform's API: creating a ticket, patching metadata.
    case api
    /// Little of anything: a file copy, a short command.
    case light
}
