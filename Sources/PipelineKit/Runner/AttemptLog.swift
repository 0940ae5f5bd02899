import Logging
import NIOConcurrencyHelpers

/// The end of what one attempt of a stage logged, kept for its history (``StageAttempt/log``): every line the
/// stage's logger passes at the run's level (FFmpeg's complaints, a stage's own notes and warnings), whatever the
/// stage type, since the runner gives each attempt its logger.
///
/// Bounded: the last ``lineLimit`` lines, at most ``byteLimit`` bytes of UTF-8 in all, so a stage that logs a line
/// per frame keeps a few KiB.
final class AttemptLog: Sendable {
    /// The lines kept.
    static let lineLimit = 40
    /// The bytes kept, over all lines; a longer line keeps its end.
    static let byteLimit = 8 * 1024

    private struct Tail {
        var lines: [String] = []
        var bytes = 0
    }

    private let tail = NIOLockedValueBox(Tail())

    /// Keeps `message` (each of its lines) as logged at `level`.
    func append(_ message: String, level: Logger.Level) {
        let lines = message.split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }
        guard !lines.isEmpty else { return }
        tail.withLockedValue { tail in
            for line in lines {
                let kept = Self.ending(of: "\(level): \(line)", bytes: Self.byteLimit)
                tail.lines.append(kept)
                tail.bytes += kept.utf8.count
            }
            while tail.lines.count > Self.lineLimit || tail.bytes > Self.byteLimit, !tail.lines.isEmpty {
                tail.bytes -= tail.lines.removeFirst().utf8.count
            }
        }
    }

    /// The lines kept, oldest first.
    var lines: [String] { tail.withLockedValue { $0.lines } }

    /// The end of `line` within `bytes` of UTF-8 (an ellipsis, then the end cut where a character starts).
    static func ending(of line: String, bytes: Int) -> String {
        guard line.utf8.count > bytes else { return line }
        let end = line.utf8.suffix(bytes - "…".utf8.count).drop { $0 & 0xC0 == 0x80 }
        return "…" + String(decoding: end, as: UTF8.self)
    }
}
