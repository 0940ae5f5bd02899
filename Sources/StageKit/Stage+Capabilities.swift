/// The defaults of what a stage type declares about streaming, its input file and its result. The two names are
/// the conventions stage authors followed before stages declared them (the engine then assumed them of every
/// stage), so a stage written or built before keeps its behaviour without a change.
extension Stage {
    /// By default a stage takes no part in streaming.
    public static var streamRole: StreamRole { .none }

    /// By convention the option `file` names the file a stage reads (every built-in stage that reads one calls it
    /// so); a stage without one declares none.
    public static var inputFileOption: String {
        optionSchema.field(named: conventionalInputFileOption) == nil ? noOption : conventionalInputFileOption
    }

    /// By convention the first of `link`, `url`, `location` and `path` among the stage's outputs says where its
    /// result landed; a stage without any declares none. Outputs that depend on a workflow's `with` (an open
    /// ``OutputSchema``) are not known here: such a stage declares its own.
    public static var landingOutput: String {
        let outputs = Set(outputSchema.fields.map(\.name))
        return conventionalLandingOutputs.first(where: outputs.contains) ?? noOutput
    }

    /// By default a stage writes no file at a path the workflow chose.
    public static func destinations(in options: Options) -> [String] { [] }

    /// By default a stage gives no reason of its own.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? { nil }

    /// The ``inputFileOption`` of a stage that has no option for the file it reads (it reads the input file, if
    /// any): no option has an empty name.
    public static var noOption: String { "" }

    /// The ``landingOutput`` of a stage whose result lands nowhere a report shows: no output has an empty name.
    public static var noOutput: String { "" }
}

/// The option that names the file a stage reads, unless it declares another.
private let conventionalInputFileOption = "file"

/// The outputs that say where a stage's result landed, in the order the first one found is taken, unless it
/// declares another.
private let conventionalLandingOutputs = ["link", "url", "location", "path"]
