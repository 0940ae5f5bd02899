/// What a workflow says, before anything runs, about the file a stage reads and the input files it may be: what a
/// stage's ``Stage/streamRefusal(with:inputs:)`` decides on, since it must say why a stream cannot work before any
/// file exists.
public struct InputSummary: Sendable, Hashable, Codable {
    /// The file the stage's ``Stage/inputFileOption`` names, when the workflow writes it out (without `${…}`); nil
    /// when it is the input file or known only when the stage runs.
    public var path: String?
    /// Whether the stage reads the item's own file: its ``Stage/inputFileOption`` is left out or `${input.path}`
    /// (or it declares none). Then ``include`` and ``containers`` are what is known of that file.
    public var isInputFile: Bool
    /// Shell patterns the input files' names match (`inputs.include`); empty: any name.
    public var include: [String]
    /// FFmpeg's names of the containers the input files may have (`inputs.limits.containers`); empty: any.
    public var containers: [String]

    /// A summary.
    public init(path: String? = nil, isInputFile: Bool, include: [String] = [], containers: [String] = []) {
        self.path = path
        self.isInputFile = isInputFile
        self.include = include
        self.containers = containers
    }
}
