public import Foundation

/// A batch event that can be announced to a webhook.
public enum NotificationEvent: String, Sendable, Hashable, CaseIterable {
    /// A run finished, or a shared batch's queue drained: one summary with counts and the first failures.
    case batchFinished
    /// An item failed (after its stage's retries).
    case itemFailed
}

/// The message shapes a webhook receiver understands.
public enum NotificationFormat: String, Sendable, Hashable, CaseIterable {
    /// The event as a JSON object (`event`, `workflow`, `counts`, `failures`, …).
    case generic
    /// A Slack incoming webhook: `{"text": …}`.
    case slack
    /// A Discord webhook: `{"content": …}`.
    case discord
}

/// One entry of a workflow's `notify`: where `pipeline run` announces the batch's events.
public struct NotifySpec: Sendable, Hashable {
    /// The webhook's URL as written: it may read `${env.NAME}` (a webhook's URL is often its secret), nothing
    /// else, since it is resolved once per run rather than per item.
    public var url: String
    /// The events it gets (`batchFinished` when the workflow names none).
    public var events: Set<NotificationEvent>
    /// The shape of its messages; nil: from the URL's host.
    public var format: NotificationFormat?
}

extension NotifySpec {
    /// `text` as a webhook URL: http or https with a host; nil when it is not one. The one test of a webhook
    /// address, for `--notify`, a workflow's `notify` and its resolved `${env.*}`.
    public static func webhookURL(_ text: String) -> URL? {
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil
        else { return nil }
        return url
    }
}
