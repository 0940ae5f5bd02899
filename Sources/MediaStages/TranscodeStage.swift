import Foundation
import Logging
public import PipelineKit

/// `ffmpeg.transcode`: decode and re-encode into an H.264/AAC MP4 (faststart by default), or, with
/// `mode: "auto"`, copy the streams when the input already is what the settings ask for.
public struct TranscodeStage: Stage {
    /// The options of `ffmpeg.transcode`.
    public struct Options: Decodable, Sendable {
        /// Video settings.
        public struct Video: Decodable, Sendable {
            /// Video codec (libx264).
            public var codec: String?
            /// Constant rate factor 0–51 (x264's default 23).
            public var crf: Int?
            /// Bits per second; with crf, a cap.
            public var bitrate: BitRate?
            /// x264 speed preset (x264's default medium).
            public var preset: String?
            /// Largest displayed width, keeping the aspect ratio.
            public var maxWidth: Int?
            /// Largest displayed height, keeping the aspect ratio.
            public var maxHeight: Int?
            /// Frame rate cap.
            public var fps: Double?
        }

        /// Audio settings.
        public struct Audio: Decodable, Sendable {
            /// Video codec (libx264).
            public var codec: String?
            /// Bits per second; with crf, a cap.
            public var bitrate: BitRate?
            /// 1–8 (default: the source's, at most 2).
            public var channels: Int?
        }

        /// The media file (default: the input file).
        public var file: String?
        /// The MP4 path (default: <stem>.mp4 in the stage's scratch folder).
        public var output: String?
        /// auto: remux when the input already fits the settings.
        public var mode: String?
        /// .
        public var profile: String?
        /// Video settings (override the profile's).
        public var video: Video?
        /// Audio settings (override the profile's).
        public var audio: Audio?
        /// Put the index first so playback starts before the download ends.
        public var faststart: Bool?
        /// Decoder and encoder threads (0: every core).
        public var threads: Int?
        /// Create the output folder if it is missing.
        public var createFolder: Bool?
    }

    /// The outputs of `ffmpeg.transcode` and `ffmpeg.remux`.
    public struct Outputs: Codable, Sendable {
        /// The MP4.
        public var path: String
        /// Its size in bytes.
        public var size: Int64
        /// Seconds.
        public var duration: Double
        /// Displayed width.
        public var width: Int
        /// Displayed height.
        public var height: Int
        /// `transcode` or `remux`: what was done.
        public var mode: String
        /// Video frames written.
        public var frames: Int64
        /// Whether it has an audio stream.
        public var hasAudio: Bool
    }

    public static let type = "ffmpeg.transcode"
    public static let summary =
        "Re-encodes into an H.264/AAC MP4 (faststart); profiles: "
        + ExportProfile.all.map(\.name).joined(separator: ", ") + "; mode auto remuxes when nothing needs re-encoding."
    public static let optionSchema = OptionSchema([
        OptionField("file", .string, "The media file (default: the input file)."),
        OptionField("output", .string, "The MP4 path (default: <stem>.mp4 in the stage's scratch folder)."),
        OptionField("mode", .oneOf(["transcode", "remux", "auto"]), default: "transcode", "auto: remux when the input already fits the settings."),
        OptionField("profile", .oneOf(ExportProfile.all.map(\.name)), "Named settings: " + ExportProfile.all.map { "\($0.name) (\($0.summary))" }.joined(separator: "; ") + "."),
        OptionField("video", .object(OptionSchema([
            OptionField("codec", .oneOf(["h264"]), default: "h264", "Video codec (libx264)."),
            OptionField("crf", .integer, "Constant rate factor 0–51 (x264's default 23)."),
            OptionField("bitrate", .bitRate, "Bits per second; with crf, a cap."),
            OptionField("preset", .oneOf(Self.presets), "x264 speed preset (x264's default medium)."),
            OptionField("maxWidth", .integer, "Largest displayed width, keeping the aspect ratio."),
            OptionField("maxHeight", .integer, "Largest displayed height, keeping the aspect ratio."),
            OptionField("fps", .number, "Frame rate cap."),
        ])), "Video settings (override the profile's)."),
        OptionField("audio", .object(OptionSchema([
            OptionField("codec", .oneOf(["aac"]), default: "aac", "Audio codec."),
            OptionField("bitrate", .bitRate, "Bits per second (default: the encoder's)."),
            OptionField("channels", .integer, "1–8 (default: the source's, at most 2)."),
        ])), "Audio settings (override the profile's)."),
        OptionField("faststart", .boolean, default: true, "Put the index first so playback starts before the download ends."),
        OptionField("threads", .integer, default: 0, "Decoder and encoder threads (0: every core)."),
        OptionField("createFolder", .boolean, default: true, "Create the output folder if it is missing."),
    ])
    public static let outputSchema = OutputSchema([
        OutputField("path", "The MP4."),
        OutputField("size", "Its size in bytes."),
        OutputField("duration", "Seconds."),
        OutputField("width", "Displayed width."),
        OutputField("height", "Displayed height."),
        OutputField("mode", "What was done: transcode or remux."),
        OutputField("frames", "Video frames written."),
        OutputField("hasAudio", "Whether it has an audio stream."),
    ])

    static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let settings = try Self.settings(from: options)
        return try await Export.run(
            file: options.file, output: options.output, mode: options.mode ?? "transcode", settings: settings,
            createFolder: options.createFolder ?? true, context: context)
    }

    /// The profile's settings with the explicit options on top.
    static func settings(from options: Options) throws -> TranscodeSettings {
        var settings = TranscodeSettings()
        if let name = options.profile {
            guard let profile = ExportProfile.named(name) else { throw StageFailure("unknown profile \(name)") }
            settings = profile.settings
        }
        if let video = options.video {
            if let crf = video.crf {
                guard (0...51).contains(crf) else { throw StageFailure("video.crf must be from 0 to 51, not \(crf)") }
                settings.crf = crf
            }
            if let bitrate = video.bitrate { settings.videoBitRate = bitrate.bitsPerSecond }
            if let preset = video.preset {
                guard presets.contains(preset) else { throw StageFailure("unknown x264 preset \(preset)") }
                settings.preset = preset
            }
            if let width = video.maxWidth { settings.maxWidth = try positive(width, "video.maxWidth") }
            if let height = video.maxHeight { settings.maxHeight = try positive(height, "video.maxHeight") }
            if let fps = video.fps {
                guard fps > 0 else { throw StageFailure("video.fps must be positive") }
                settings.maxFPS = fps
            }
        }
        if let audio = options.audio {
            if let bitrate = audio.bitrate { settings.audioBitRate = bitrate.bitsPerSecond }
            if let channels = audio.channels {
                guard (1...8).contains(channels) else { throw StageFailure("audio.channels must be from 1 to 8") }
                settings.audioChannels = channels
            }
        }
        if let faststart = options.faststart { settings.faststart = faststart }
        if let threads = options.threads {
            guard threads >= 0 else { throw StageFailure("threads must be 0 (every core) or more") }
            settings.threads = threads
        }
        return settings
    }

    private static func positive(_ value: Int, _ name: String) throws -> Int {
        guard value > 0 else { throw StageFailure("\(name) must be positive") }
        return value
    }
}

/// `ffmpeg.remux`: copies the streams into an MP4 (faststart) without re-encoding.
public struct RemuxStage: Stage {
    /// The options of `ffmpeg.remux`.
    public struct Options: Decodable, Sendable {
        /// The media file (default: the input file).
        public var file: String?
        /// The MP4 path (default: <stem>.mp4 in the stage's scratch folder).
        public var output: String?
        /// Put the index first so playback starts before the download ends.
        public var faststart: Bool?
        /// Create the output folder if it is missing.
        public var createFolder: Bool?
    }

    public typealias Outputs = TranscodeStage.Outputs

    public static let type = "ffmpeg.remux"
    public static let summary = "Copies the streams into an MP4 with faststart, without re-encoding (fast, lossless)."
    public static let optionSchema = OptionSchema([
        OptionField("file", .string, "The media file (default: the input file)."),
        OptionField("output", .string, "The MP4 path (default: <stem>.mp4 in the stage's scratch folder)."),
        OptionField("faststart", .boolean, default: true, "Put the index first."),
        OptionField("createFolder", .boolean, default: true, "Create the output folder if it is missing."),
    ])
    public static let outputSchema = TranscodeStage.outputSchema

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        var settings = TranscodeSettings()
        settings.faststart = options.faststart ?? true
        return try await Export.run(
            file: options.file, output: options.output, mode: "remux", settings: settings,
            createFolder: options.createFolder ?? true, context: context)
    }
}

/// What transcode and remux share: choosing the mode, the temporary output, progress, warnings.
enum Export {
    static func run(
        file: String?, output path: String?, mode: String, settings: TranscodeSettings, createFolder: Bool,
        context: StageContext
    ) async throws -> TranscodeStage.Outputs {
        let input = file ?? context.item.path
        let output = MediaOutput(destination: MediaPaths.output(path, context: context, extension: "mp4"))
        if let outputs = output.reusable(from: context, as: TranscodeStage.Outputs.self) { return outputs }
        try output.prepareFolder(create: createFolder)

        var settings = settings
        switch mode {
        case "remux": settings.mode = .remux
        case "auto":
            let info = try await MediaToolkit.probe(input, logger: context.logger)
            let reason = remuxBlocker(info, settings: settings)
            settings.mode = reason == nil ? .remux : .transcode
            context.logger.info(
                reason.map { "mode auto: transcoding because \($0)" } ?? "mode auto: remuxing, the input already fits (H.264/AAC within the limits)")
        default: settings.mode = .transcode
        }

        do {
            let report = try await MediaToolkit.transcode(input, to: output.partial.path, settings: settings, logger: context.logger) {
                done, total in
                context.reportProgress(StageProgress(completed: Int64(done), total: total > 0 ? Int64(total.rounded(.up)) : nil, unit: .seconds))
            }
            if report.decodeErrors > 0 || (report.inputDuration > 0 && report.decodedSeconds < report.inputDuration - 0.5) {
                context.logger.warning(
                    "the input is damaged or truncated: decoded \(String(format: "%.2f", report.decodedSeconds)) of \(String(format: "%.2f", report.inputDuration)) s, \(report.decodeErrors) unreadable packet(s) skipped")
            }
            var outputs = TranscodeStage.Outputs(
                path: output.destination.path, size: report.size, duration: (report.duration * 1000).rounded() / 1000, width: report.width,
                height: report.height, mode: settings.mode.rawValue, frames: report.videoFrames, hasAudio: report.hasAudio)
            outputs.size = try await output.commit(outputs, context: context)
            return outputs
        } catch {
            output.discard()
            throw error
        }
    }

    /// Why the input cannot simply be remuxed for these settings; nil when it can.
    static func remuxBlocker(_ info: MediaInfo, settings: TranscodeSettings) -> String? {
        guard let video = info.video else { return "the input has no video" }
        if video.codec != "h264" { return "its video is \(video.codec), not h264" }
        if let audio = info.audio, audio.codec != "aac" { return "its audio is \(audio.codec), not aac" }
        if info.audioStreams > 1 { return "it has \(info.audioStreams) audio tracks" }
        if let maxWidth = settings.maxWidth, video.displayWidth > maxWidth { return "it is wider than \(maxWidth)" }
        if let maxHeight = settings.maxHeight, video.displayHeight > maxHeight { return "it is taller than \(maxHeight)" }
        if let fps = settings.maxFPS, video.fps > fps + 0.01 { return "its frame rate is above \(fps)" }
        if let rate = settings.videoBitRate, video.bitRate > rate { return "its video bit rate is above \(rate)" }
        if let channels = settings.audioChannels, let audio = info.audio, audio.channels > channels {
            return "it has more than \(channels) audio channels"
        }
        return nil
    }
}
