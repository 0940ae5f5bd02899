import ArgumentParser
import Notifications
import PipelineKit

/// `--notify URL[#EVENTS]`, shared by `run` and `worker`: where a batch's events are announced.
struct NotifyOptions: ParsableArguments {
    @Option(
        name: .customLong("notify"),
        help: ArgumentHelp(
            "Announce batch events to a webhook (repeatable): URL, optionally #EVENT,… (batchFinished, itemFailed; default batchFinished) and format=generic|slack|discord (default from the host).",
            valueName: "URL[#EVENTS]"))
    var targets: [String] = []

    /// How long a finished batch waits for its notifications to be delivered before the command exits.
    static let grace: Duration = .seconds(5)

    /// Refuses a value that is not a target (exit code 2).
    func validate() throws {
        for target in targets {
            if case .failure(let error) = NotificationTarget.parse(target) {
                throw ValidationError("--notify \(error)")
            }
        }
    }

    /// The notifier of these targets, recording in `log`; nil without targets.
    func notifier(log: any NotificationLog) -> Notifier? {
        let parsed = targets.compactMap { try? NotificationTarget.parse($0).get() }
        guard !parsed.isEmpty else { return nil }
        return Notifier(targets: parsed, log: log) { warning in Output.error("pipeline: warning: \(warning)") }
    }
}
