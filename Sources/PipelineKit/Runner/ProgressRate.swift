public import Foundation

/// How fast a stage progresses, by one rule for every place that shows it (the terminal and the dashboard): units
/// per second from the last report from before the last ``window`` (or the first report) to the newest, once those
/// two are a second apart. A stall long ago no longer slows it down, and a pause that just ended does: the reports
/// before it stay the rate's start until newer ones are old enough to take over.
public struct ProgressRate: Sendable {
    /// How far back the rate looks.
    public static let window: TimeInterval = 10

    /// Recent reports (time, completed), the oldest first.
    private var reports: [(at: Date, completed: Int64)] = []

    /// Units per second, once two reports were a second apart; nil before.
    public private(set) var perSecond: Double?

    /// A rate with no report yet.
    public init() {}

    /// Takes in a report of `completed` units at `now` (reports come in time order).
    public mutating func record(_ completed: Int64, at now: Date) {
        reports.append((now, completed))
        while reports.count > 1, now.timeIntervalSince(reports[1].at) >= Self.window {
            reports.removeFirst()
        }
        guard let first = reports.first, case let span = now.timeIntervalSince(first.at), span >= 1 else {
            perSecond = nil
            return
        }
        perSecond = max(0, Double(completed - first.completed) / span)
    }

    /// Seconds until `completed` reaches `total` at `perSecond`, when both are known and the rate is above zero.
    public static func secondsLeft(completed: Int64, total: Int64?, perSecond: Double?) -> Double? {
        guard let total, let perSecond, perSecond > 0 else { return nil }
        return Double(max(0, total - completed)) / perSecond
    }
}
