import ArgumentParser
import Foundation
import Notifications
import PipelineKit

import enum StageKit.JSONValue

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

    /// These targets and those `workflow` declares in `notify` (their `${env.*}` read from `environment`). A
    /// declared URL that does not resolve to an http or https URL is a usage error (exit code 2): resolve them
    /// before anything is changed.
    func resolvedTargets(workflow: Workflow? = nil, environment: [String: String] = [:]) throws
        -> [NotificationTarget]
    {
        var parsed = targets.compactMap { try? NotificationTarget.parse($0).get() }
        for (index, declared) in (workflow?.notify ?? []).enumerated() {
            parsed.append(try Self.target(declared, index: index, file: workflow?.file ?? "", environment: environment))
        }
        return parsed
    }

    /// The notifier of `targets`, recording in `log`; nil without targets.
    static func notifier(_ targets: [NotificationTarget], log: any NotificationLog) -> Notifier? {
        guard !targets.isEmpty else { return nil }
        return Notifier(targets: targets, log: log) { warning in Output.error("pipeline: warning: \(warning)") }
    }

    /// A workflow's `notify` entry with its URL resolved.
    private static func target(
        _ declared: NotifySpec, index: Int, file: String, environment: [String: String]
    ) throws -> NotificationTarget {
        let resolved: String?
        do {
            resolved = try EvaluationScope(environment: environment).resolve(.string(declared.url)).value.stringValue
        } catch {
            throw CommandFailure(.invalid, "\(file): notify[\(index)].url: \(error.message)")
        }
        guard let url = resolved.flatMap(NotifySpec.webhookURL) else {
            // The resolved URL is likely a secret: name the template, not its value.
            throw CommandFailure(
                .invalid, "\(file): notify[\(index)].url (\(declared.url)) is not an http or https URL once resolved")
        }
        return NotificationTarget(url: url, format: declared.format, events: declared.events)
    }
}
