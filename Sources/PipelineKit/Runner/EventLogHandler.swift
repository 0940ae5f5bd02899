package import Logging
import StageKit

/// A swift-log handler that turns a stage's log lines into ``LogLine``
/// events, with secrets redacted.
package struct EventLogHandler: LogHandler {
    let sink: any RunEventSink
    let redactor: SecretRedactor
    let item: String?
    let stage: String?
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]

    /// A handler sending lines of `level` and above, about `item` and `stage` (when given), to `sink`.
    package init(
        sink: any RunEventSink, redactor: SecretRedactor, item: String?, stage: String?, logLevel: Logger.Level
    ) {
        self.sink = sink
        self.redactor = redactor
        self.item = item
        self.stage = stage
        self.logLevel = logLevel
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var text = "\(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if !merged.isEmpty {
            text += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        sink.emit(LogLine(level: event.level, item: item, stage: stage, message: redactor.shown(text)))
    }
}
