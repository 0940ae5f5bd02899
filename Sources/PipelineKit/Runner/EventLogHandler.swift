package import Logging
import StageKit

/// A swift-log handler that turns a stage's log lines into ``LogLine``
/// events, with secrets redacted.
package struct EventLogHandler: LogHandler {
    let sink: any RunEventSink
    let redactor: SecretRedactor
    let item: String?
    let stage: String?
    /// Where an attempt of a stage keeps the end of what it logged, for its history.
    let attemptLog: AttemptLog?
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]

    /// A handler sending lines of `level` and above, about `item` and `stage` (when given), to `sink`, and keeping
    /// their end in `attemptLog` when given.
    package init(
        sink: any RunEventSink, redactor: SecretRedactor, item: String?, stage: String?, logLevel: Logger.Level
    ) {
        self.init(sink: sink, redactor: redactor, item: item, stage: stage, logLevel: logLevel, attemptLog: nil)
    }

    init(
        sink: any RunEventSink, redactor: SecretRedactor, item: String?, stage: String?, logLevel: Logger.Level,
        attemptLog: AttemptLog?
    ) {
        self.sink = sink
        self.redactor = redactor
        self.item = item
        self.stage = stage
        self.attemptLog = attemptLog
        self.logLevel = logLevel
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Keeps the line in the attempt's log and sends it on; a history line (`Logger.historyLineKey`) is
    /// sent on at debug level, and only when this handler passes debug lines.
    package func log(event: LogEvent) {
        var text = "\(event.message)"
        var merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let historyLine = merged.removeValue(forKey: Logger.historyLineKey) != nil
        if !merged.isEmpty {
            text += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        let shown = redactor.shown(text)
        attemptLog?.append(shown, level: event.level)
        guard !historyLine || logLevel <= .debug else { return }
        sink.emit(LogLine(level: historyLine ? .debug : event.level, item: item, stage: stage, message: shown))
    }
}
