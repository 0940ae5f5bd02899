import Foundation
import Logging
public import StageKit

/// `ffmpeg.probe`: container and stream facts of a media file.
public struct ProbeStage: Stage {
    /// The options of `ffmpeg.probe`.
    public struct Options: StageOptions {
        /// The file (default: the input file).
        @Option("The media file (default: the input file).") public var file: String?

        public init() {}
    }

    /// The outputs of `ffmpeg.probe`.
    public struct Outputs: StageOutputs {
        /// Container (demuxer) name.
        @Output("Container (demuxer) name.") public var format = ""
        /// Seconds.
        @Output("Seconds.") public var duration = 0.0
        /// Bytes.
        @Output("Bytes.") public var size: Int64 = 0
        /// Overall bits per second.
        @Output("Overall bits per second.") public var bitrate: Int64 = 0
        /// Displayed width (after rotation).
        @Output("Displayed width (after rotation).") public var width: Int? = nil
        /// Displayed height (after rotation).
        @Output("Displayed height (after rotation).") public var height: Int? = nil
        /// Degrees a player turns the picture clockwise.
        @Output("Degrees a player turns the picture clockwise.") public var rotation: Int? = nil
        /// Average frame rate.
        @Output("Average frame rate.") public var fps: Double? = nil
        /// e.g. h264, hevc; absent without video.
        @Output("e.g. h264, hevc; absent without video.") public var videoCodec: String? = nil
        /// Video bits per second.
        @Output("Video bits per second.") public var videoBitrate: Int64? = nil
        /// e.g. yuv420p.
        @Output("e.g. yuv420p.") public var pixelFormat: String? = nil
        /// Frames, when the container says.
        @Output("Frames, when the container says.") public var frameCount: Int64? = nil
        /// e.g. aac; absent without audio.
        @Output("e.g. aac; absent without audio.") public var audioCodec: String? = nil
        /// Audio samples per second.
        @Output("Audio samples per second.") public var sampleRate: Int? = nil
        /// Audio channels.
        @Output("Audio channels.") public var channels: Int? = nil
        /// Audio bits per second.
        @Output("Audio bits per second.") public var audioBitrate: Int64? = nil
        /// Number of audio streams.
        @Output("Number of audio streams.") public var audioTracks = 0
        /// Number of subtitle streams.
        @Output("Number of subtitle streams.") public var subtitleTracks = 0

        public init() {}
    }

    public static let stageType = "ffmpeg.probe"
    public static let readsMediaInput = true
    public static let inputFileOption = "file"
    public static let summary = "Reads container and stream facts (codecs, size, fps, rotation, duration) with FFmpeg."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let info = try await MediaToolkit.probe(options.file ?? context.item.path, logger: context.logger)
        return Outputs.with {
            $0.format = info.format
            $0.duration = (info.duration * 1000).rounded() / 1000
            $0.size = info.size
            $0.bitrate = info.bitRate
            $0.width = info.video?.displayWidth
            $0.height = info.video?.displayHeight
            $0.rotation = info.video?.rotation
            $0.fps = info.video?.fps
            $0.videoCodec = info.video?.codec
            $0.videoBitrate = info.video?.bitRate
            $0.pixelFormat = info.video?.pixelFormat
            $0.frameCount = info.video.flatMap { video in video.frameCount > 0 ? video.frameCount : nil }
            $0.audioCodec = info.audio?.codec
            $0.sampleRate = info.audio?.sampleRate
            $0.channels = info.audio?.channels
            $0.audioBitrate = info.audio?.bitRate
            $0.audioTracks = info.audioStreams
            $0.subtitleTracks = info.subtitleStreams
        }
    }
}

/// `ffmpeg.thumbnail`: one JPEG frame at a time offset.
public struct ThumbnailStage: Stage {
    /// The options of `ffmpeg.thumbnail`.
    public struct Options: StageOptions {
        /// The media file (default: the input file).
        @Option("The media file (default: the input file).") public var file: String?
        /// The JPEG's path (default: `<stem>.jpg` in the stage's scratch folder).
        @Option("The JPEG path (default: <stem>.jpg in the stage's scratch folder).") public var output: String?
        /// Where in the file (default: 10 % into it).
        @Option("Time offset (default: 10 % of the duration).") public var at: TimeSpan?
        /// The largest width as displayed (0: full size).
        @Option("Largest width, keeping the aspect ratio (0: full size).", minimum: 0) public var maxWidth = 0
        /// Create the output folder if missing.
        @Option("Create the output folder if it is missing.") public var createFolder = true

        public init() {}
    }

    /// The outputs of `ffmpeg.thumbnail`.
    public struct Outputs: StageOutputs, Decodable {
        /// The JPEG.
        @Output("The JPEG.") public var path = ""
        /// Displayed width (after rotation).
        @Output("Its width.") public var width = 0
        /// Displayed height (after rotation).
        @Output("Its height.") public var height = 0
        /// Bytes.
        @Output("Its size in bytes.") public var size: Int64 = 0

        public init() {}
    }

    public static let stageType = "ffmpeg.thumbnail"

    /// The JPEG, when the workflow names one (the default is in the stage's scratch folder).
    public static func destinations(in options: Options) -> [String] { options.output.map { [$0] } ?? [] }
    public static let resource = StageResource.cpu
    public static let readsMediaInput = true
    public static let inputFileOption = "file"
    public static let landingOutput = "path"
    public static let summary = "Writes one JPEG frame at a time offset (default 10 % into the file), upright."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let input = options.file ?? context.item.path
        let output = MediaOutput(destination: MediaPaths.output(options.output, context: context, extension: "jpg"))
        if let outputs = output.reusable(from: context, as: Outputs.self) { return outputs }
        try output.prepareFolder(create: options.createFolder)
        do {
            let size = try await MediaToolkit.thumbnail(
                input, to: output.partial.path, at: options.at?.seconds, maxWidth: options.maxWidth,
                logger: context.logger)
            var outputs = Outputs.with {
                $0.path = output.destination.path
                $0.width = size.width
                $0.height = size.height
            }
            outputs.size = MediaOutput.size(of: output.partial) ?? 0
            outputs.size = try await output.commit(outputs, context: context)
            return outputs
        } catch {
            let located = output.locating(error, scratch: context.scratchFolder)
            output.discard()
            throw located
        }
    }
}

/// Default output locations.
enum MediaPaths {
    /// `path` as given, or `<input stem>.<extension>` in the stage's scratch folder.
    static func output(_ path: String?, context: StageContext, extension ext: String) -> URL {
        if let path { return URL(fileURLWithPath: path).standardizedFileURL }
        return context.scratchFolder.appendingPathComponent("\(context.item.stem).\(ext)")
    }
}
