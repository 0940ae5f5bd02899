import Logging
import StageKit

/// A swift-log handler that turns a stage's log lines into ``LogLine``
/// events, with secrets redacted.
struct EventLogHandler: LogHandler {
    let sink: any RunEventSink
    let redactor: SecretRedactor
    let item: String?
    let stage: String?
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var text = "\(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if !merged.isEmpty {
            text += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        sink.emit(LogLine(level: event.level.rawValue, item: item, stage: stage, message: redactor.redact(text)))
    }
}
