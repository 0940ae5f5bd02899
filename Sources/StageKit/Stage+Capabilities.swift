/// The defaults of what a stage type declares about streaming, its input file and its result.
extension Stage {
    /// By default a stage takes no part in streaming.
    public static var streamRole: StreamRole { .none }

    /// By default a stage names no file it reads.
    public static var inputFileOption: String? { nil }

    /// By default a stage's result lands nowhere a report shows.
    public static var landingOutput: String? { nil }

    /// By default a stage gives no reason of its own.
    public static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? { nil }
}
