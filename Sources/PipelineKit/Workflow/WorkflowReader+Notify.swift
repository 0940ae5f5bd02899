import Foundation
import StageKit

/// A workflow's `notify`: the webhooks `pipeline run` announces the batch's events to.
extension WorkflowReader {
    mutating func readNotify(_ value: JSONValue?) -> [NotifySpec] {
        let path = JSONPath.root.appending("notify")
        guard let value else { return [] }
        guard case .array(let elements) = value else {
            log.error(
                path,
                "expected an array such as [{\"url\": \"https://…\", \"on\": [\"batchFinished\"]}], found \(value.kindName)"
            )
            return []
        }
        return elements.enumerated().compactMap { index, element in
            readNotifyTarget(element, at: path.appending(index: index))
        }
    }

    private mutating func readNotifyTarget(_ value: JSONValue, at path: JSONPath) -> NotifySpec? {
        guard case .object(let members) = value else {
            log.error(path, "expected an object with \"url\", found \(value.kindName)")
            return nil
        }
        checkKeys(members, of: WorkflowGrammar.notify, at: path)
        guard let url = string(members["url"], at: path.appending("url"), required: true) else { return nil }
        checkNotifyURL(url, at: path.appending("url"))
        var events: Set<NotificationEvent> = []
        let eventNames = NotificationEvent.allCases.map(\.rawValue)
        switch members["on"] {
        case nil: events = [.batchFinished]
        case .array(let names):
            for (index, name) in names.enumerated() {
                guard let text = string(name, at: path.appending("on").appending(index: index)) else { continue }
                guard let event = NotificationEvent(rawValue: text) else {
                    log.error(
                        path.appending("on").appending(index: index),
                        "unknown event \"\(text)\"; the events are \(eventNames.joined(separator: ", "))"
                            + Suggestion.phrase(for: text, among: eventNames))
                    continue
                }
                events.insert(event)
            }
        case let other?:
            log.error(
                path.appending("on"), "expected an array of events such as [\"batchFinished\"], found \(other.kindName)"
            )
        }
        var format: NotificationFormat?
        if let value = members["format"] {
            format = value.stringValue.flatMap(NotificationFormat.init(rawValue:))
            if format == nil {
                log.error(
                    path.appending("format"),
                    "expected one of \(NotificationFormat.allCases.map(\.rawValue).joined(separator: ", ")), found \(value.serialized())"
                )
            }
        }
        return NotifySpec(url: url, events: events, format: format)
    }

    /// A webhook URL is http or https, and its templates read only `env.*`: it is resolved once per run, where
    /// no item's values exist.
    private mutating func checkNotifyURL(_ url: String, at path: JSONPath) {
        let template: Template
        do {
            template = try Template(parsing: url)
        } catch {
            log.error(path, "invalid expression in \(JSONValue.string(url).serialized()): \(error.message)")
            return
        }
        if let other = template.expressions.flatMap(\.references).first(where: { $0.root != "env" }) {
            log.error(path, "a notify url may read only ${env.NAME}, not ${\(other)}: it is resolved once per run")
            return
        }
        guard template.isLiteral else { return }
        if NotifySpec.webhookURL(url) == nil {
            log.error(path, "expected an http or https URL, found \(JSONValue.string(url).serialized())")
        }
    }
}
