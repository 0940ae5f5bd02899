import Foundation
import Logging
import StageKit
import Synchronization
import TestSupport
import Testing

@testable import MediaStages

/// A damaged file makes FFmpeg complain about every packet it skips: a transcode passes on its first lines and
/// then one line with the number left out, unless the logger is at debug level (`--verbose`).
/// Its transcodes run one at a time: a frame-threaded decoder's workers log some lines without saying for which
/// file, and with two operations running those lines are no one operation's.
@Suite(.serialized) struct DamagedInputLogTests {
    @Test func ffmpegsComplaintsAboutADamagedFileAreCapped() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("damaged.mp4")
        try await makeClip(seconds: 4, size: "320x240", rate: "25", at: input)
        try Self.damage(input, with: SeededRandom("ffmpegsComplaintsAboutADamagedFileAreCapped"))
        var settings = TranscodeSettings()
        settings.preset = .ultrafast

        let verbose = try await Self.ffmpegLines(input.path, settings: settings, level: .debug, folder: folder)
        #expect(
            verbose.count > FFmpegLog.linesShown + 1, "the damage makes more lines than are shown: \(verbose.count)")
        #expect(!verbose.contains { $0.contains("left out") })

        let lines = try await Self.ffmpegLines(input.path, settings: settings, level: .info, folder: folder)
        #expect(lines.count == FFmpegLog.linesShown + 1, "\(lines.count) lines")
        let leftOut = verbose.count - FFmpegLog.linesShown
        #expect(lines.last == "ffmpeg: \(leftOut) more message(s) left out (--verbose shows every one)")
    }

    /// A damaged AAC packet can decode to a frame in another channel layout that cannot be converted (here ten
    /// channels in no known order, for a mono stream): that frame is heard as silence of its packet's length with a
    /// warning, instead of failing the whole export, and the audio around it is kept.
    @Test func anAudioFrameInALayoutThatCannotBeConvertedBecomesSilence() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("damaged.mp4")
        try await makeClip(seconds: 4, size: "320x240", rate: "25", at: input)
        // The seed with which the test above once found the case (its clip is the same bytes on every run).
        try Self.damage(input, with: SeededRandom(#function, pinned: 6_025_055_548_904_477_885))
        var settings = TranscodeSettings()
        settings.preset = .ultrafast

        let lines = try await Self.ffmpegLines(input.path, settings: settings, level: .debug, folder: folder)
        #expect(
            lines.contains { $0.contains("an audio frame in 10 channels (the stream has 1) was replaced by silence") })
        let output = try await FFprobe.of(folder.appendingPathComponent("out-\(Logger.Level.debug).mp4").path)
        let audio = Double(output.stream("audio")?["duration"]?.stringValue ?? "") ?? 0
        let video = Double(output.stream("video")?["duration"]?.stringValue ?? "") ?? 0
        #expect(audio > 1 && audio < video + 0.1, "audio \(audio) s, video \(video) s")
    }

    /// Overwrites a third of `file` from its middle on with `random`'s noise: the index stands, most packets after
    /// it are garbage.
    static func damage(_ file: URL, with random: SeededRandom) throws {
        var bytes = try Data(contentsOf: file)
        for index in (bytes.count / 3)..<(bytes.count * 2 / 3) {
            bytes[index] = UInt8(truncatingIfNeeded: random.next())
        }
        try bytes.write(to: file)
    }

    /// The lines starting with `ffmpeg:` that a transcode logs at `level`.
    static func ffmpegLines(
        _ input: String, settings: TranscodeSettings, level: Logger.Level, folder: URL
    ) async throws -> [String] {
        let lines = LineCollector(level: level)
        let logger = Logger(label: "test") { _ in lines }
        _ = try await MediaToolkit.transcode(
            input, to: folder.appendingPathComponent("out-\(level).mp4").path, settings: settings, logger: logger)
        return lines.lines.withLock { $0 }.filter { $0.hasPrefix("ffmpeg: ") }
    }
}

/// A log handler at a fixed level that keeps the messages at warning level and above (FFmpeg's errors and
/// warnings).
final class LineCollector: LogHandler, Sendable {
    let lines = Mutex<[String]>([])
    private let level: Logger.Level

    init(level: Logger.Level) {
        self.level = level
    }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    var logLevel: Logger.Level {
        get { level }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        guard event.level >= .warning else { return }
        lines.withLock { $0.append("\(event.message)") }
    }
}
