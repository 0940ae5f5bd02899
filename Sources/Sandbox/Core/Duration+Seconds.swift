import StageKit

extension Duration {
    /// The duration in seconds, as a `TimeInterval`: dates and timers of the sandbox count in seconds.
    var seconds: Double {
        let parts = self.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
