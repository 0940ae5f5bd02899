import Foundation
public import StageKit

/// `ffmpeg.transcode`: decode and re-encode into an H.264, HEVC or AV1 + AAC MP4 (faststart by default), or, with
/// `mode: "auto"`, copy the streams when the input already plays where the profile promises (``PlaybackRules``).
public struct TranscodeStage: Stage {
    /// The options of `ffmpeg.transcode`.
    public struct Options: StageOptions {
        /// Video settings.
        public struct Video: NestedOptions {
            /// Video codec.
            @Option(
                "Video codec: h264 (libx264), hevc (libx265, tagged hvc1), av1 (SVT-AV1) (default: the profile's, else h264)."
            )
            public var codec: VideoCodec?
            /// Constant rate factor.
            @Option(
                "Constant rate factor, within the codec's range: h264 and hevc 0–51, av1 0–63 (default: the profile's, else the encoder's).",
                minimum: 0, maximum: 63)
            public var crf: Int?
            /// Bits per second; with crf, a cap.
            @Option("Bits per second; with crf, a cap.", minimum: 1000) public var bitrate: BitRate?
            /// Speed preset.
            @Option(
                "Speed preset by x264's names (x265 takes the same; for av1 mapped to SVT-AV1's 12 … 2) (default: the profile's, else the encoder's)."
            )
            public var preset: EncoderPreset?
            /// Largest displayed width, keeping the aspect ratio.
            @Option("Largest displayed width, keeping the aspect ratio.", minimum: 1) public var maxWidth: Int?
            /// Largest displayed height, keeping the aspect ratio.
            @Option("Largest displayed height, keeping the aspect ratio.", minimum: 1) public var maxHeight: Int?
            /// Frame rate cap.
            @Option("Frame rate cap.", exclusiveMinimum: 0) public var fps: Double?

            public init() {}
        }

        /// Audio settings.
        public struct Audio: NestedOptions {
            /// Audio codec.
            @Option("Audio codec.") public var codec = AudioCodec.aac
            /// Bits per second.
            @Option("Bits per second (default: the profile's, else the encoder's).", minimum: 1000)
            public var bitrate: BitRate?
            /// Channels.
            @Option("Channels (default: the source's, at most 2).", minimum: 1, maximum: 8) public var channels: Int?

            public init() {}
        }

        /// A quality report of the export against its source, and a gate on it.
        public struct Quality: NestedOptions {
            /// What to measure with.
            @Option(
                "What to measure the export against its source with: vmaf (model vmaf_v0.6.1, 0–100), ssim (0–1), psnr (dB, above 0, at most 100)."
            )
            public var metric = QualityMetric.vmaf
            /// The figure of the report that minQuality and target apply to.
            @Option(
                "The figure of the report that minQuality and target apply to: mean (of every frame's score) or low1 (the mean of the worst 1 % of frames)."
            )
            public var pool = QualityPool.mean
            /// The lowest score the export may have, as `pool` pools it.
            @Option(
                "Fail the stage (not retried) when the pooled score is below this, in the metric's units and range: a gate before upload.",
                minimum: 0)
            public var minQuality: Double?
            /// The pooled score to aim at: the stage searches the CRF that meets it.
            @Option(
                "Search the highest CRF whose export meets this pooled score (in the metric's units), by encoding samples of the source; excludes video.crf.",
                minimum: 0)
            public var target: Double?
            /// The lowest CRF the search may choose.
            @Option("With target: the lowest CRF the search may choose (default 10).", minimum: 0, maximum: 63)
            public var minCRF: Int?
            /// The highest CRF the search may choose.
            @Option(
                "With target: the highest CRF the search may choose (default: h264 and hevc 40, av1 55).", minimum: 0,
                maximum: 63)
            public var maxCRF: Int?
            /// The export's largest size; it wins over the target.
            @Option("With target: the export's largest size (bytes, or \"50MB\"); wins over the target, saying so.")
            public var maxSize: ByteCount?
            /// The export's largest average bit rate; it wins over the target.
            @Option("With target: the export's largest average bits per second, audio included; wins over the target.")
            public var maxBitrate: BitRate?

            public init() {}
        }

        /// The media file (default: the input file).
        @Option("The media file (default: the input file).") public var file: String?
        /// The MP4 path (default: <stem>.mp4 in the stage's scratch folder).
        @Option("The MP4 path (default: <stem>.mp4 in the stage's scratch folder).") public var output: String?
        /// A measured quality report (output `quality`) and gate; by default the encoder's own PSNR is reported.
        @Option(
            "Measure the export against its source and report it as the output quality instead of the encoder's PSNR; minQuality makes it a gate (default: no measurement: it decodes both files again)."
        )
        public var quality: Quality?
        /// Report the encoder's own PSNR of every frame (output `quality`) when `quality` asks for no measurement.
        @Option(
            "Report the encoder's own PSNR of every frame as the output quality (H.264; false: no report, not allowed with quality, whose measurement replaces it). Changing it encodes a finished export again."
        )
        public var qualityReport = true
        /// auto: remux when the input already fits the settings.
        @Option("auto: remux when the input already fits the settings.") public var mode = ExportMode.transcode
        /// Named settings.
        @Option(ProfileName.summary) public var profile: ProfileName?
        /// Video settings (override the profile's).
        @Option("Video settings (override the profile's).") public var video: Video?
        /// Audio settings (override the profile's).
        @Option("Audio settings (override the profile's).") public var audio: Audio?
        /// Put the index first so playback starts before the download ends.
        @Option("Put the index first so playback starts before the download ends.") public var faststart = true
        /// Decoder and encoder threads (0: every core).
        @Option("Decoder and encoder threads (0: every core).", minimum: 0) public var threads = 0
        /// Create the output folder if it is missing.
        @Option("Create the output folder if it is missing.") public var createFolder = true
        /// Encode the video in segments of this length, each checkpointed: a crash loses at most one.
        @Option(
            "Encode the video in segments of this length, each checkpointed, so a crash loses at most one segment's work (0: never; default: 60s segments for sources over 10 minutes).",
            minimum: 0)
        public var segmentSeconds: TimeSpan?
        /// Segments encoded at once, with the threads shared among them.
        @Option(
            "Segments encoded at once, the threads shared among them (for machines with many cores).", minimum: 1,
            maximum: 16)
        public var segmentJobs = 1
        /// Where segments start, near each multiple of segmentSeconds.
        @Option(
            "Where segments start, near each multiple of segmentSeconds: keyframes (the default: at the source's nearest keyframe) or scenes (at the strongest scene change within a quarter of a segment, else as keyframes; costs a decoding pass over the source, kept in the checkpoint)."
        )
        public var segmentCuts = SegmentCuts.keyframes

        public init() {}

        /// The CRF's range depends on the codec (VideoCodec.crfRange), which the profile may choose: the declared
        /// bounds are those of the widest, and a value outside them is refused by them alone.
        public static func problems(in with: JSONValue) -> [OptionProblem] {
            QualityGate.problems(in: with) + crfProblems(in: with) + QualityTarget.problems(in: with)
                + reportProblems(in: with)
        }

        /// `qualityReport: false` turns the default report off; `quality` replaces it by a measured one: both at once
        /// contradict each other.
        private static func reportProblems(in with: JSONValue) -> [OptionProblem] {
            guard with["qualityReport"] == .bool(false), with["quality"] != nil else { return [] }
            return [
                OptionProblem(
                    at: JSONPath.root.appending("qualityReport"),
                    "qualityReport false turns the quality report off, while quality asks for a measured one: give one of them"
                )
            ]
        }

        private static func crfProblems(in with: JSONValue) -> [OptionProblem] {
            guard let crf = with["video"]?["crf"]?.intValue, let codec = TranscodeStage.codec(in: with),
                VideoCodec.allCases.contains(where: { $0.crfRange.contains(crf) })
            else {
                return []
            }
            let range = codec.crfRange
            guard !range.contains(crf) else { return [] }
            return [
                OptionProblem(
                    at: JSONPath.root.appending("video").appending("crf"),
                    "expected an integer from \(range.lowerBound) to \(range.upperBound) for \(codec.rawValue), found \(crf)"
                )
            ]
        }
    }

    /// What the stage does with the streams.
    public enum ExportMode: String, OptionChoice {
        /// Decode and re-encode.
        case transcode
        /// Copy the streams.
        case remux
        /// Copy when the input already fits the settings, else re-encode.
        case auto
    }

    /// The audio codecs the stage writes.
    public enum AudioCodec: String, OptionChoice {
        /// AAC through FFmpeg's encoder.
        case aac
    }

    /// The name of an ``ExportProfile``.
    public struct ProfileName: OptionValue, Hashable {
        /// The profile's name.
        public var name: String

        public static var optionType: OptionType { .oneOf(ExportProfile.all.map(\.name)) }

        /// The option's summary, naming every profile.
        static let summary =
            "Named settings: " + ExportProfile.all.map { "\($0.name) (\($0.summary))" }.joined(separator: "; ") + "."

        public init(from decoder: any Decoder) throws {
            name = try String(from: decoder)
        }

        public func encode(to encoder: any Encoder) throws {
            try name.encode(to: encoder)
        }
    }

    /// The outputs of `ffmpeg.transcode` and `ffmpeg.remux`.
    public struct Outputs: StageOutputs, Decodable {
        /// The MP4.
        @Output("The MP4.") public var path = ""
        /// Its size in bytes.
        @Output("Its size in bytes.") public var size: Int64 = 0
        /// Seconds.
        @Output("Seconds.") public var duration = 0.0
        /// Displayed width.
        @Output("Displayed width.") public var width = 0
        /// Displayed height.
        @Output("Displayed height.") public var height = 0
        /// `transcode` or `remux`: what was done.
        @Output("What was done: transcode or remux.") public var mode = ""
        /// Video frames written.
        @Output("Video frames written.") public var frames: Int64 = 0
        /// Whether it has an audio stream.
        @Output("Whether it has an audio stream.") public var hasAudio = false
        /// Why a transcode has no quality report (without a gate): the export could not be measured, or its encoder
        /// does not report its PSNR.
        @Output(
            "ffmpeg.transcode without a report: why (the export could not be measured, or \"not reported by libx265\" and the like: the encoder hands out no PSNR); absent with qualityReport false, and for a ladder's renditions."
        )
        public var qualityNotMeasured: String? = nil
        /// The quality report of a transcode.
        @Output(
            "ffmpeg.transcode (never a remux): the export against its source: metric, source (encoder: the encoder's own PSNR of each frame, the default; measured: the option quality), model (VMAF), frames, mean, low1 (the mean of the worst 1 % of frames), worst, worstFrame, and for a segmented export worstSegment (index, start, frames, mean)."
        )
        public var quality: QualityReport? = nil
        /// The CRF search of `quality.target`: the chosen CRF and the probes.
        @Output(
            "ffmpeg.transcode with quality.target: crf (chosen), target, metric, pool, probes (crf, score on the samples, size: the video's estimated bytes), note (when a budget won or the target is out of reach).",
            whenGiven: "quality")
        public var crfSearch: CRFSearchReport? = nil

        public init() {}
    }

    public static let stageType = "ffmpeg.transcode"

    /// The output file, when the workflow names one (the default is in the stage's scratch folder).
    public static func destinations(in options: Options) -> [String] { options.output.map { [$0] } ?? [] }
    public static let resource = StageResource.cpu
    public static let readsMediaInput = true
    public static let inputFileOption = "file"
    public static let landingOutput = "path"
    /// Segments joined into a faststart MP4, or a remux of an MP4 or MOV, are final behind the head as written.
    public static let streamRole = StreamRole.producer
    public static let summary =
        "Re-encodes into an H.264, HEVC or AV1 + AAC MP4 (faststart); profiles: "
        + ExportProfile.all.map(\.name).joined(separator: ", ")
        + "; mode auto remuxes when the input already plays where the profile promises."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let (settings, rules) = try Self.settings(from: options)
        return try await Export.run(
            file: options.file, output: options.output, mode: options.mode, settings: settings, rules: rules,
            segmenting: (options.segmentSeconds, options.segmentJobs, options.segmentCuts),
            quality: QualityGate(options.quality), encoderReport: options.qualityReport,
            createFolder: options.createFolder, target: options.quality, context: context)
    }

    /// The profile's settings with the explicit options on top, and the rules its files follow (the profile's, or
    /// the codec's usual ones when the options change the codec or name no profile).
    static func settings(from options: Options) throws -> (TranscodeSettings, PlaybackRules) {
        var settings = TranscodeSettings()
        var profile: ExportProfile?
        if let name = options.profile?.name {
            profile = ExportProfile.named(name)
            guard let profile else { throw StageFailure("unknown profile \(name)", kind: .invalidOptions) }
            settings = profile.settings
        }
        if let video = options.video {
            if let codec = video.codec {
                if codec != settings.codec {
                    // Another encoder: the profile's CRF and preset mean something else there.
                    settings.crf = nil
                    settings.preset = nil
                }
                settings.codec = codec
            }
            if let crf = video.crf { settings.crf = Double(crf) }
            if let bitrate = video.bitrate { settings.videoBitRate = bitrate.bitsPerSecond }
            if let preset = video.preset { settings.preset = preset }
            if let width = video.maxWidth { settings.maxWidth = width }
            if let height = video.maxHeight { settings.maxHeight = height }
            if let fps = video.fps { settings.maxFPS = fps }
        }
        if let audio = options.audio {
            if let bitrate = audio.bitrate { settings.audioBitRate = bitrate.bitsPerSecond }
            if let channels = audio.channels { settings.audioChannels = channels }
        }
        settings.faststart = options.faststart
        settings.threads = options.threads
        let rules = profile.flatMap { $0.rules.codec == settings.codec ? $0.rules : nil }
        return (settings, rules ?? .standard(for: settings.codec))
    }

    /// The codec an export of these options writes: the video codec's, else the profile's, else H.264; nil while a
    /// template leaves it unknown.
    static func codec(in with: JSONValue) -> VideoCodec? {
        switch with["video"]?["codec"] {
        case .string(let name)?: return VideoCodec(rawValue: name)
        case nil, .null?: break
        default: return nil
        }
        switch with["profile"] {
        case .string(let name)?: return ExportProfile.named(name)?.settings.codec
        case nil, .null?: return .h264
        default: return nil
        }
    }
}

/// `ffmpeg.remux`: copies the streams into an MP4 (faststart) without re-encoding.
public struct RemuxStage: Stage {
    /// The options of `ffmpeg.remux`.
    public struct Options: StageOptions {
        /// The media file (default: the input file).
        @Option("The media file (default: the input file).") public var file: String?
        /// The MP4 path (default: <stem>.mp4 in the stage's scratch folder).
        @Option("The MP4 path (default: <stem>.mp4 in the stage's scratch folder).") public var output: String?
        /// Put the index first so playback starts before the download ends.
        @Option("Put the index first.") public var faststart = true
        /// Create the output folder if it is missing.
        @Option("Create the output folder if it is missing.") public var createFolder = true

        public init() {}
    }

    public typealias Outputs = TranscodeStage.Outputs

    public static let stageType = "ffmpeg.remux"

    /// The output file, when the workflow names one (the default is in the stage's scratch folder).
    public static func destinations(in options: Options) -> [String] { options.output.map { [$0] } ?? [] }
    public static let readsMediaInput = true
    public static let inputFileOption = "file"
    public static let landingOutput = "path"
    /// A remux of an MP4 or MOV copies behind room reserved for the index.
    public static let streamRole = StreamRole.producer
    public static let summary = "Copies the streams into an MP4 with faststart, without re-encoding (fast, lossless)."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        var settings = TranscodeSettings()
        settings.faststart = options.faststart
        return try await Export.run(
            file: options.file, output: options.output, mode: .remux, settings: settings, rules: nil, segmenting: nil,
            quality: nil, encoderReport: false, createFolder: options.createFolder, context: context)
    }
}
