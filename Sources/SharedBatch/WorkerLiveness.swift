public import Foundation

extension BatchStatus.Worker {
    /// `stopped`, `silent` (no heartbeat for longer than its lease: killed, or cut off) or `live`, as of `now`.
    public func liveness(at now: Date = Date()) -> String {
        if stoppedAt != nil { return "stopped" }
        return now.timeIntervalSince(heartbeatAt) > lease ? "silent" : "live"
    }
}
