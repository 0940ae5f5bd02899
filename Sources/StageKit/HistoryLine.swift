public import Logging

extension Logger {
    /// The metadata key that marks a line as one for the attempt's history: the attempt keeps it as an info line,
    /// and the run's output shows it only at debug level (`--verbose`). The key itself is shown nowhere.
    public static let historyLineKey = "pipeline.history"

    /// Logs `line` for the attempt's history (what a program said, say) without showing it in the run's output at
    /// the default level: kept at info level in the attempt's log lines, shown at debug level.
    public func history(_ line: String) {
        info("\(line)", metadata: [Self.historyLineKey: "true"])
    }
}
