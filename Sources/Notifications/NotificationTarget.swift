public import Foundation
public import PipelineKit

/// Where notifications go and in which shape.
public struct NotificationTarget: Sendable, Hashable {
    /// The message shapes a receiver understands.
    public typealias Format = NotificationFormat

    /// The webhook's URL.
    public var url: URL
    /// The shape of its messages.
    public var format: Format
    /// The events it gets.
    public var events: Set<NotificationEvent>

    /// A target; without a format, Slack's and Discord's webhook hosts get theirs and every other URL the
    /// generic JSON.
    public init(url: URL, format: Format? = nil, events: Set<NotificationEvent> = [.batchFinished]) {
        self.url = url
        self.format = format ?? Self.format(of: url)
        self.events = events
    }

    /// Reads a `--notify` value: `URL`, optionally followed by `#` and options separated by `,`, each an event
    /// name or `format=slack|discord|generic` (`https://hooks.slack.com/…#batchFinished,itemFailed`). Nil with
    /// the reason when it is not one.
    public static func parse(_ text: String) -> Result<NotificationTarget, NotificationTargetError> {
        let parts = text.split(separator: "#", maxSplits: 1).map(String.init)
        guard let address = parts.first, let url = NotifySpec.webhookURL(address) else {
            return .failure(NotificationTargetError(message: "\(text): expected an http or https URL"))
        }
        var events: Set<NotificationEvent> = []
        var format: Format?
        for option in parts.count > 1 ? parts[1].split(separator: ",").map(String.init) : [] {
            if option.hasPrefix("format=") {
                guard let named = Format(rawValue: String(option.dropFirst("format=".count))) else {
                    return .failure(
                        NotificationTargetError(message: "\(text): format is one of generic, slack, discord"))
                }
                format = named
            } else if let event = NotificationEvent(rawValue: option) {
                events.insert(event)
            } else {
                return .failure(
                    NotificationTargetError(
                        message:
                            "\(text): \(option) is not an event (batchFinished, itemFailed) or format=generic|slack|discord"
                    ))
            }
        }
        return .success(
            NotificationTarget(url: url, format: format, events: events.isEmpty ? [.batchFinished] : events))
    }

    private static func format(of url: URL) -> Format {
        let host = url.host?.lowercased() ?? ""
        if host == "hooks.slack.com" { return .slack }
        if host == "discord.com" || host == "discordapp.com" || host.hasSuffix(".discord.com") { return .discord }
        return .generic
    }
}

/// A `--notify` value that is not a target.
public struct NotificationTargetError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, for people.
    public var message: String
    public var description: String { message }
}
