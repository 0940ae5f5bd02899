import Foundation
import Logging
public import StageKit
import StageRuntime

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

        /// The media file (default: the input file).
        @Option("The media file (default: the input file).") public var file: String?
        /// The MP4 path (default: <stem>.mp4 in the stage's scratch folder).
        @Option("The MP4 path (default: <stem>.mp4 in the stage's scratch folder).") public var output: String?
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

        public init() {}

        /// The CRF's range depends on the codec (VideoCodec.crfRange), which the profile may choose: the declared
        /// bounds are those of the widest, and a value outside them is refused by them alone.
        public static func problems(in with: JSONValue) -> [OptionProblem] {
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

        public init() {}
    }

    public static let stageType = "ffmpeg.transcode"
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
            segmenting: (options.segmentSeconds, options.segmentJobs), createFolder: options.createFolder,
            context: context)
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
            if let crf = video.crf { settings.crf = crf }
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
            createFolder: options.createFolder, context: context)
    }
}

/// What transcode and remux share: choosing the mode, the temporary output, progress, warnings.
enum Export {
    /// How an export of a source runs: with which settings, in segments of what length and how many at once
    /// (nil: in one piece), and for `mode: auto`, what decided it.
    struct Decision {
        var settings: TranscodeSettings
        var segments: (length: Double, jobs: Int)?
        var autoChoice: String?
    }

    /// How an export of the source that `info` describes runs, decided as ``run(file:output:mode:settings:rules:segmenting:createFolder:context:)``
    /// decides it (and as `pipeline plan` says).
    static func decide(
        _ info: MediaInfo, mode: TranscodeStage.ExportMode, settings: TranscodeSettings, rules: PlaybackRules?,
        segmenting: (length: TimeSpan?, jobs: Int)?
    ) -> Decision {
        var decision = Decision(settings: settings)
        switch mode {
        case .remux: decision.settings.mode = .remux
        case .auto:
            let standard = rules ?? .standard(for: settings.codec)
            let reason = standard.mismatch(info, settings: settings)
            decision.settings.mode = reason == nil ? .remux : .transcode
            decision.autoChoice =
                reason.map { "transcoding because \($0)" } ?? "remuxing, the input already fits (\(standard.summary))"
        case .transcode: decision.settings.mode = .transcode
        }
        guard decision.settings.mode == .transcode else { return decision }
        if let rules { decision.settings = rules.promise(decision.settings, for: info) }
        if let segmenting, segmenting.length?.seconds != 0,
            let length = SegmentedTranscode.length(option: segmenting.length, duration: info.duration)
        {
            decision.segments = (length, segmenting.jobs)
        }
        return decision
    }

    /// `rules`: what a transcode promises (nil: a plain remux). `segmenting`: the `segmentSeconds` option and the
    /// segments encoded at once (nil: never segmented).
    static func run(
        file: String?, output path: String?, mode: TranscodeStage.ExportMode, settings: TranscodeSettings,
        rules: PlaybackRules?, segmenting: (length: TimeSpan?, jobs: Int)?, createFolder: Bool, context: StageContext
    ) async throws -> TranscodeStage.Outputs {
        let input = file ?? context.item.path
        let output = MediaOutput(destination: MediaPaths.output(path, context: context, extension: "mp4"))
        if let outputs = output.reusable(from: context, as: TranscodeStage.Outputs.self) { return outputs }
        try output.prepareFolder(create: createFolder)

        let info = try await MediaToolkit.probe(input, logger: context.logger)
        if info.isStillImage {
            throw MediaError(
                code: .noVideo,
                message: "'\(input)' is a still picture (\(info.format)), not a video: nothing to export")
        }
        let decision = decide(info, mode: mode, settings: settings, rules: rules, segmenting: segmenting)
        if let dropped = droppedStreams(info, segmented: decision.segments != nil) {
            context.logger.notice(
                "dropping \(dropped): the MP4 keeps one video and one audio track, and text subtitles as mov_text")
        }
        if let choice = decision.autoChoice { context.logger.info("mode auto: \(choice)") }
        let settings = decision.settings
        var segmented: SegmentedTranscode?
        var farmed: FarmedTranscode?
        if let (length, jobs) = decision.segments {
            let indexSpace = SegmentedTranscode.indexSpace(duration: info.duration, source: info, settings: settings)
            // Only the item's own file (an earlier stage's output is on this worker's disk alone), only H.264
            // (workers announce the build of their H.264 encoder alone), and no HDR source: its tone mapping
            // (zimg) picks its kernels by the processor, so two machines may convert a picture differently.
            if input == context.item.path, settings.codec == .h264, info.video?.highDynamicRange == nil,
                let farm = context.services[SegmentFarmKey.self],
                let store = context.services[SegmentStoreKey.self]
            {
                farmed = FarmedTranscode(
                    input: input, settings: settings, duration: info.duration, hasAudio: info.audio != nil,
                    indexSpace: indexSpace, segmentSeconds: length, jobs: jobs, farm: farm, store: store,
                    context: context)
            } else {
                segmented = SegmentedTranscode(
                    input: input, settings: settings, duration: info.duration, hasAudio: info.audio != nil,
                    indexSpace: indexSpace, segmentSeconds: length, jobs: jobs, context: context)
            }
        }

        do {
            let progress: @Sendable (Double, Double) -> Void = { done, total in
                context.reportProgress(
                    StageProgress(
                        completed: Int64(done), total: total > 0 ? Int64(total.rounded(.up)) : nil, unit: .seconds))
            }
            let report: TranscodeReport
            var farmedPlan: SegmentPlan?
            // A stage that streams this export reads the file as the segments are joined into it.
            let stream = context.services[ExportStreamKey.self].map { ($0, output.destination.path) }
            if let farmed {
                let (joined, plan) = try await farmed.run(to: output.partial.path, stream: stream, progress: progress)
                report = joined
                farmedPlan = plan
            } else if let segmented {
                report = try await segmented.run(to: output.partial.path, stream: stream, progress: progress)
            } else if settings.mode == .remux, let (stream, destination) = stream {
                // A remux of an MP4 or MOV writes its index into room ahead of the media data: a stage that streams
                // this export reads the file as it is copied.
                report = try await MediaToolkit.remux(
                    input, to: output.partial.path, settings: settings,
                    gate: .streaming(stream, destination: destination, writing: output.partial.path),
                    logger: context.logger, progress: progress)
            } else {
                report = try await MediaToolkit.transcode(
                    input, to: output.partial.path, settings: settings, logger: context.logger, progress: progress)
            }
            let policy = context.services[DamagedInputPolicyKey.self] ?? .default
            if policy != .export,
                let short = DamagedInputPolicy.shortfall(decoded: report.decodedSeconds, declared: report.inputDuration)
            {
                throw StageFailure.damagedInput(short)
            }
            if report.decodeErrors > 0
                || (report.inputDuration > 0 && report.decodedSeconds < report.inputDuration - 0.5)
            {
                context.logger.warning(
                    "the input is damaged or truncated: decoded \(String(format: "%.2f", report.decodedSeconds)) of \(String(format: "%.2f", report.inputDuration)) s, \(report.decodeErrors) unreadable packet(s) skipped"
                )
            }
            var outputs = TranscodeStage.Outputs.with {
                $0.path = output.destination.path
                $0.size = report.size
                $0.duration = (report.duration * 1000).rounded() / 1000
                $0.width = report.width
                $0.height = report.height
                $0.mode = settings.mode.rawValue
                $0.frames = report.videoFrames
                $0.hasAudio = report.hasAudio
            }
            outputs.size = try await output.commit(outputs, context: context)
            context.services[ExportStreamKey.self]?.finish(destination: output.destination.path, size: outputs.size)
            segmented?.removeSegments()
            if let farmed, let farmedPlan { await farmed.retire(farmedPlan) }
            return outputs
        } catch {
            let located = output.locating(error, scratch: context.scratchFolder)
            output.discard()
            throw located
        }
    }

    /// The streams an export leaves out, for a note; nil when none. A segmented export carries its subtitles in its
    /// audio pass: one of a source without audio keeps none.
    static func droppedStreams(_ info: MediaInfo, segmented: Bool) -> String? {
        var dropped: [String] = []
        if info.videoStreams > 1 { dropped.append("\(info.videoStreams - 1) more video track(s)") }
        if info.audioStreams > 1 { dropped.append("\(info.audioStreams - 1) more audio track(s)") }
        let pictures = info.subtitleStreams - info.textSubtitleStreams
        if segmented, info.audio == nil, info.subtitleStreams > 0 {
            // A segmented export carries its subtitles in the audio pass, which a source without audio has not.
            dropped.append(
                "\(info.subtitleStreams) subtitle track(s) (a segmented export of a source without audio keeps none)")
        } else if pictures > 0 {
            dropped.append("\(pictures) bitmap subtitle track(s) (DVD, Blu-ray or DVB pictures, not text)")
        }
        if info.dataStreams > 0 {
            dropped.append("\(info.dataStreams) data track(s) (a timecode stays, as the MP4's timecode track)")
        }
        if info.attachedPictures > 0 { dropped.append("\(info.attachedPictures) cover picture(s)") }
        return dropped.isEmpty ? nil : dropped.joined(separator: ", ")
    }
}

extension TranscodeStage: PlanDescribing {
    /// Whether the export transcodes or remuxes (`mode: auto`), and into how many segments it splits the source,
    /// with those an earlier run already encoded.
    public static func planNote(_ options: Options, input: String, checkpoint: JSONValue?) async -> String? {
        let file = options.file ?? input
        guard let (settings, rules) = try? settings(from: options), let info = try? await MediaToolkit.probe(file),
            !info.isStillImage
        else { return nil }
        let decision = Export.decide(
            info, mode: options.mode, settings: settings, rules: rules,
            segmenting: (options.segmentSeconds, options.segmentJobs))
        var notes = decision.autoChoice.map { ["mode auto: \($0)"] } ?? []
        if let (length, jobs) = decision.segments,
            let plan = try? await SegmentedTranscode.plan(
                file, duration: info.duration, segmentSeconds: length, jobs: jobs, settings: decision.settings,
                logger: nil)
        {
            let count = plan.starts.count == 1 ? "one segment" : "\(plan.starts.count) segments"
            var split = "in \(count) of \(TimeSpan(seconds: length))"
            // As the run decides: segments of another plan are encoded again (their files are checked then).
            if let saved = try? checkpoint?.decode(as: SegmentedTranscode.Progress.self), saved.matches(plan),
                !saved.segments.isEmpty
            {
                split += ", \(saved.segments.count) already encoded"
            }
            notes.append(split)
        }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }
}
