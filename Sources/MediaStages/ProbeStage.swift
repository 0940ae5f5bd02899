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
    public struct Outputs: Codable, Sendable {
        /// Container (demuxer) name.
        public var format: String
        /// Seconds.
        public var duration: Double
        /// Bytes.
        public var size: Int64
        /// Overall bits per second.
        public var bitrate: Int64
        /// Displayed width (after rotation).
        public var width: Int?
        /// Displayed height (after rotation).
        public var height: Int?
        /// Degrees a player turns the picture clockwise.
        public var rotation: Int?
        /// Average frame rate.
        public var fps: Double?
        /// e.g. h264, hevc; absent without video.
        public var videoCodec: String?
        /// Video bits per second.
        public var videoBitrate: Int64?
        /// e.g. yuv420p.
        public var pixelFormat: String?
        /// Frames, when the container says.
        public var frameCount: Int64?
        /// e.g. aac; absent without audio.
        public var audioCodec: String?
        /// Audio samples per second.
        public var sampleRate: Int?
        /// Audio channels.
        public var channels: Int?
        /// Audio bits per second.
        public var audioBitrate: Int64?
        /// Number of audio streams.
        public var audioTracks: Int
        /// Number of subtitle streams.
        public var subtitleTracks: Int
    }

    public static let stageType = "ffmpeg.probe"
    public static let readsMediaInput = true
    public static let inputFileOption = "file"
    public static let summary = "Reads container and stream facts (codecs, size, fps, rotation, duration) with FFmpeg."
    public static let outputSchema = OutputSchema([
        OutputField("format", "Container (demuxer) name."),
        OutputField("duration", "Seconds."),
        OutputField("size", "Bytes."),
        OutputField("bitrate", "Overall bits per second."),
        OutputField("width", "Displayed width (after rotation)."),
        OutputField("height", "Displayed height (after rotation)."),
        OutputField("rotation", "Degrees a player turns the picture clockwise."),
        OutputField("fps", "Average frame rate."),
        OutputField("videoCodec", "e.g. h264, hevc; absent without video."),
        OutputField("videoBitrate", "Video bits per second."),
        OutputField("pixelFormat", "e.g. yuv420p."),
        OutputField("frameCount", "Frames, when the container says."),
        OutputField("audioCodec", "e.g. aac; absent without audio."),
        OutputField("sampleRate", "Audio samples per second."),
        OutputField("channels", "Audio channels."),
        OutputField("audioBitrate", "Audio bits per second."),
        OutputField("audioTracks", "Number of audio streams."),
        OutputField("subtitleTracks", "Number of subtitle streams."),
    ])

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let info = try await MediaToolkit.probe(options.file ?? context.item.path, logger: context.logger)
        return Outputs(
            format: info.format, duration: (info.duration * 1000).rounded() / 1000, size: info.size,
            bitrate: info.bitRate,
            width: info.video?.displayWidth, height: info.video?.displayHeight, rotation: info.video?.rotation,
            fps: info.video?.fps, videoCodec: info.video?.codec, videoBitrate: info.video?.bitRate,
            pixelFormat: info.video?.pixelFormat,
            frameCount: info.video.map { $0.frameCount > 0 ? $0.frameCount : nil } ?? nil,
            audioCodec: info.audio?.codec, sampleRate: info.audio?.sampleRate, channels: info.audio?.channels,
            audioBitrate: info.audio?.bitRate, audioTracks: info.audioStreams, subtitleTracks: info.subtitleStreams)
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
    public struct Outputs: Codable, Sendable {
        /// The JPEG.
        public var path: String
        /// Displayed width (after rotation).
        public var width: Int
        /// Displayed height (after rotation).
        public var height: Int
        /// Bytes.
        public var size: Int64
    }

    public static let stageType = "ffmpeg.thumbnail"
    public static let resource = StageResource.cpu
    public static let readsMediaInput = true
    public static let inputFileOption = "file"
    public static let landingOutput = "path"
    public static let summary = "Writes one JPEG frame at a time offset (default 10 % into the file), upright."
    public static let outputSchema = OutputSchema([
        OutputField("path", "The JPEG."),
        OutputField("width", "Its width."),
        OutputField("height", "Its height."),
        OutputField("size", "Its size in bytes."),
    ])

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let input = options.file ?? context.item.path
        let output = MediaOutput(destination: MediaPaths.output(options.output, context: context, extension: "jpg"))
        if let outputs = output.reusable(from: context, as: Outputs.self) { return outputs }
        guard options.maxWidth >= 0 else { throw StageFailure("maxWidth must be 0 or more", kind: .invalidOptions) }
        try output.prepareFolder(create: options.createFolder)
        do {
            let size = try await MediaToolkit.thumbnail(
                input, to: output.partial.path, at: options.at?.seconds, maxWidth: options.maxWidth,
                logger: context.logger)
            var outputs = Outputs(path: output.destination.path, width: size.width, height: size.height, size: 0)
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
