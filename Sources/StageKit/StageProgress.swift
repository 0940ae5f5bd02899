/// What a stage reports while it works.
public struct StageProgress: Sendable, Hashable {
    /// What the numbers count.
    public enum Unit: String, Sendable, Hashable {
        case bytes, seconds, items
    }

    /// Done so far.
    public var completed: Int64
    /// The whole, when known.
    public var total: Int64?
    /// What is counted.
    public var unit: Unit

    /// Creates a progress report.
    public init(completed: Int64, total: Int64?, unit: Unit) {
        self.completed = completed
        self.total = total
        self.unit = unit
    }
}

extension Duration {
    /// The duration in seconds.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
