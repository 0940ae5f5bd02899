import CMediaShim
import Foundation
public import Logging
import NIOConcurrencyHelpers
import StageKit
import Synchronization

/// Container and stream facts of a media file.
public struct MediaInfo: Sendable, Hashable, Codable {
    /// The video stream transcoding uses.
    public struct Video: Sendable, Hashable, Codable {
        /// The codec, e.g. `h264`.
        public var codec: String
        /// Stored picture size.
        public var width: Int
        /// Stored picture height.
        public var height: Int
        /// Size as shown (swapped for a rotation of 90 or 270 degrees).
        public var displayWidth: Int
        /// Displayed height.
        public var displayHeight: Int
        /// Degrees a player turns the picture clockwise.
        public var rotation: Int
        /// Average frame rate.
        public var fps: Double
        /// e.g. `yuv420p`.
        public var pixelFormat: String
        /// Bits per second.
        public var bitRate: Int64
        /// From the container's index; 0 when it does not say.
        public var frameCount: Int64
    }

    /// The audio stream transcoding keeps (the default one).
    public struct Audio: Sendable, Hashable, Codable {
        /// The codec, e.g. `aac`.
        public var codec: String
        /// Samples per second.
        public var sampleRate: Int
        /// Channels.
        public var channels: Int
        /// Bits per second.
        public var bitRate: Int64
    }

    /// Demuxer name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`.
    public var format: String
    /// Seconds.
    public var duration: Double
    /// Bytes.
    public var size: Int64
    /// Overall bits per second.
    public var bitRate: Int64
    /// Video streams (cover pictures excluded).
    public var videoStreams: Int
    /// Audio streams.
    public var audioStreams: Int
    /// Subtitle streams.
    public var subtitleStreams: Int
    /// The video stream transcoding uses, if any.
    public var video: Video?
    /// The audio stream transcoding keeps, if any.
    public var audio: Audio?
}

/// How to produce an MP4.
public struct TranscodeSettings: Sendable, Hashable {
    /// Re-encode, or copy the compressed streams.
    public enum Mode: String, Sendable, Hashable, Codable {
        /// Decode and re-encode.
        case transcode
        /// Copy the compressed streams.
        case remux
    }

    /// Re-encode or copy.
    public var mode: Mode = .transcode
    /// x264 constant rate factor (0...51); nil for x264's default (23).
    public var crf: Int?
    /// Video bits per second (with a CRF: a cap).
    public var videoBitRate: Int64?
    /// x264 speed preset such as `veryfast`; nil for x264's default (`medium`).
    public var preset: String?
    /// Fit inside this box as displayed, keeping the aspect ratio, never upscaling.
    public var maxWidth: Int?
    /// See ``maxWidth``.
    public var maxHeight: Int?
    /// Drop frames to stay at or below this rate.
    public var maxFPS: Double?
    /// Audio bits per second; nil for the encoder's default.
    public var audioBitRate: Int64?
    /// Audio channels; nil keeps the source's, at most 2.
    public var audioChannels: Int?
    /// Put the index first so playback can start before the download ends.
    public var faststart = true
    /// Decoder and encoder threads; 0 uses every core.
    public var threads = 0
    /// Which streams to write (transcode only): both, or the video or the audio alone.
    public var streams = Streams.all
    /// Transcode only the video frames shown in this span of the input; needs `streams` `.video`. The
    /// output's timeline starts at the span's start.
    public var range: TimeRange?

    /// Which streams a transcode writes.
    public enum Streams: Sendable, Hashable {
        /// The best video stream and the best audio stream.
        case all
        /// The video alone: a part of a segmented transcode.
        case video
        /// The audio alone: the one audio pass of a segmented transcode.
        case audio
    }

    /// A span of the input: seconds from its start, `end` excluded (nil: to the end).
    public struct TimeRange: Sendable, Hashable {
        public var start: Double
        public var end: Double?

        public init(start: Double, end: Double?) {
            self.start = start
            self.end = end
        }
    }

    /// The defaults: transcode to H.264/AAC with x264's and the AAC encoder's defaults, faststart.
    public init() {}
}

/// What a transcode wrote.
public struct TranscodeReport: Sendable, Hashable {
    /// Seconds.
    public var duration: Double
    /// Size as shown.
    public var width: Int
    /// See ``width``.
    public var height: Int
    /// The display rotation carried over.
    public var rotation: Int
    /// Whether an audio stream was written.
    public var hasAudio: Bool
    /// Bytes.
    public var size: Int64
    /// Video frames written.
    public var videoFrames: Int64
    /// Packets or frames that could not be decoded and were skipped.
    public var decodeErrors: Int64
    /// How far decoding got; less than ``inputDuration`` for a truncated input.
    public var decodedSeconds: Double
    /// The input's duration as its container states it.
    public var inputDuration: Double
}

/// FFmpeg through the C shim, as async functions: each call runs on a thread of its own (FFmpeg blocks;
/// see ``BlockingWork/runLong(_:)``),
/// cancelling the calling task stops a transcode within a fraction of a second, and FFmpeg's log lines
/// go to the logger of the stage that is running.
public enum MediaToolkit {
    /// The shim's ABI version; the Swift side was written for 2.
    public static var abiVersion: Int { Int(ms_abi_version()) }

    /// Reads container and stream facts.
    public static func probe(_ path: String, logger: Logger? = nil) async throws -> MediaInfo {
        let result: Result<MediaInfo, MediaError> = await FFmpegLog.routing(to: logger) {
            await BlockingWork.runLong {
                var info = ms_media_info()
                var message = [CChar](repeating: 0, count: 1024)
                let status = ms_probe(path, &info, &message, message.count)
                guard status == 0 else { return .failure(MediaError(shimCode: status, message: message)) }
                return .success(MediaInfo(info))
            }
        }
        return try result.get()
    }

    /// Writes an MP4 of `input` at `output`; `progress` gets (seconds done, seconds in all). `videoRead` is
    /// called once the video (or its range) is read and decoded, while the encoder still drains its delayed
    /// frames: the moment a segmented transcode starts its next segment.
    public static func transcode(
        _ input: String, to output: String, settings: TranscodeSettings, logger: Logger? = nil,
        progress: @escaping @Sendable (Double, Double) -> Void = { _, _ in },
        videoRead: (@Sendable () -> Void)? = nil
    ) async throws -> TranscodeReport {
        try await runReporting(logger: logger, progress: progress, videoRead: videoRead) {
            callback, context, report, message in
            var options = shimOptions(settings)
            if videoRead != nil {
                options.video_read = { context in
                    guard let context else { return }
                    Unmanaged<ProgressRelay>.fromOpaque(context).takeUnretainedValue().videoRead?()
                }
                options.video_read_ctx = context
            }
            return ms_transcode(input, output, &options, callback, context, &report, &message, message.count)
        }
    }

    /// The shim's options for `settings`.
    private static func shimOptions(_ settings: TranscodeSettings) -> ms_transcode_options {
        var options = ms_transcode_options()
        ms_transcode_options_init(&options)
        options.mode = settings.mode == .remux ? Int32(MS_MODE_REMUX.rawValue) : Int32(MS_MODE_TRANSCODE.rawValue)
        options.crf = Int32(settings.crf ?? -1)
        options.video_bit_rate = settings.videoBitRate ?? 0
        withUnsafeMutableBytes(of: &options.x264_preset) { buffer in
            let bytes = Array((settings.preset ?? "").utf8.prefix(buffer.count - 1))
            buffer.copyBytes(from: bytes + [0])
        }
        options.max_width = Int32(settings.maxWidth ?? 0)
        options.max_height = Int32(settings.maxHeight ?? 0)
        options.max_fps = settings.maxFPS ?? 0
        options.audio_bit_rate = settings.audioBitRate ?? 0
        options.audio_channels = Int32(settings.audioChannels ?? 0)
        options.faststart = settings.faststart ? 1 : 0
        options.threads = Int32(settings.threads)
        switch settings.streams {
        case .all: options.streams = Int32(MS_STREAMS_ALL.rawValue)
        case .video: options.streams = Int32(MS_STREAMS_VIDEO.rawValue)
        case .audio: options.streams = Int32(MS_STREAMS_AUDIO.rawValue)
        }
        if let range = settings.range {
            options.range_start = range.start
            options.range_duration = range.end.map { $0 - range.start } ?? 0
        }
        return options
    }

    /// Joins by stream copy the video parts of a segmented transcode (each made with `streams` `.video` and
    /// the range starting at its entry of `starts`, in order) and, when given, the audio of a transcode
    /// made with `streams` `.audio`, into one MP4 at `output`.
    public static func join(
        parts: [String], starts: [Double], audio: String?, to output: String, faststart: Bool,
        logger: Logger? = nil, progress: @escaping @Sendable (Double, Double) -> Void = { _, _ in }
    ) async throws -> TranscodeReport {
        try await runReporting(logger: logger, progress: progress) { callback, context, report, message in
            var pointers = parts.map { strdup($0) }
            defer { pointers.forEach { free($0) } }
            return pointers.withUnsafeMutableBufferPointer { pointers in
                pointers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { pointers in
                    ms_join(
                        pointers.baseAddress, starts, Int32(parts.count), audio, output, faststart ? 1 : 0, callback,
                        context, &report, &message, message.count)
                }
            }
        }
    }

    /// The presentation times (seconds from the start) of the video keyframes the container indexes, in order
    /// (MP4 and MOV: all of them; other containers: few or none).
    public static func keyframes(_ path: String, logger: Logger? = nil) async throws -> [Double] {
        let result: Result<[Double], MediaError> = await FFmpegLog.routing(to: logger) {
            await BlockingWork.runLong {
                var message = [CChar](repeating: 0, count: 1024)
                // Room for a keyframe a second over 18 hours; the file is read again only when it has more.
                var times = [Double](repeating: 0, count: 1 << 16)
                var count = ms_keyframes(path, &times, Int32(times.count), &message, message.count)
                if count > times.count {
                    times = [Double](repeating: 0, count: Int(count))
                    count = ms_keyframes(path, &times, Int32(times.count), &message, message.count)
                }
                guard count >= 0 else { return .failure(MediaError(shimCode: count, message: message)) }
                return .success(Array(times.prefix(min(Int(count), times.count))))
            }
        }
        return try result.get()
    }

    /// The build number of the libx264 H.264 is encoded with (0 when unknown): outputs of two builds may
    /// differ bit for bit, so a segmented transcode records it with its parts.
    public static var x264Build: Int {
        get async { await BlockingWork.runLong { Int(ms_x264_build()) } }
    }

    /// Runs a shim call that reports progress and fills a result, on a thread of its own. Cancelling the
    /// calling task stops it within a fraction of a second (``CancellationError``).
    private static func runReporting(
        logger: Logger?, progress: @escaping @Sendable (Double, Double) -> Void,
        videoRead: (@Sendable () -> Void)? = nil,
        _ call:
            @escaping @Sendable (
                ms_progress_fn, UnsafeMutableRawPointer, inout ms_transcode_result, inout [CChar]
            ) -> Int32
    ) async throws -> TranscodeReport {
        let relay = ProgressRelay(progress, videoRead: videoRead)
        let result: Result<TranscodeReport, MediaError> = await withTaskCancellationHandler {
            await FFmpegLog.routing(to: logger) {
                await BlockingWork.runLong {
                    var report = ms_transcode_result()
                    var message = [CChar](repeating: 0, count: 1024)
                    let context = Unmanaged.passUnretained(relay).toOpaque()
                    let status = withExtendedLifetime(relay) {
                        call(
                            { context, done, total in
                                guard let context else { return 1 }
                                return Unmanaged<ProgressRelay>.fromOpaque(context).takeUnretainedValue().report(
                                    done, total)
                            }, context, &report, &message)
                    }
                    guard status == 0 else { return .failure(MediaError(shimCode: status, message: message)) }
                    return .success(TranscodeReport(report))
                }
            }
        } onCancel: {
            relay.cancel()
        }
        if case .failure(let error) = result, error.shimCode == MS_ERROR_CANCELLED.rawValue {
            throw CancellationError()
        }
        return try result.get()
    }

    /// Writes one JPEG of the frame at `seconds` (nil: 10 % into the file), at most `maxWidth` wide
    /// (0: full size); returns its size.
    public static func thumbnail(
        _ input: String, to output: String, at seconds: Double?, maxWidth: Int, logger: Logger? = nil
    ) async throws -> (width: Int, height: Int) {
        let result: Result<(width: Int, height: Int), MediaError> = await FFmpegLog.routing(to: logger) {
            await BlockingWork.runLong {
                var width: Int32 = 0
                var height: Int32 = 0
                var message = [CChar](repeating: 0, count: 1024)
                let status = ms_thumbnail(
                    input, output, seconds ?? -1, Int32(maxWidth), &width, &height, &message, message.count)
                guard status == 0 else { return .failure(MediaError(shimCode: status, message: message)) }
                return .success((Int(width), Int(height)))
            }
        }
        return try result.get()
    }
}

/// Carries progress and the end of the video's reading out of, and cancellation into, a running transcode.
private final class ProgressRelay: Sendable {
    private let handler: @Sendable (Double, Double) -> Void
    let videoRead: (@Sendable () -> Void)?
    private let cancelled = Atomic<Bool>(false)

    init(_ handler: @escaping @Sendable (Double, Double) -> Void, videoRead: (@Sendable () -> Void)?) {
        self.handler = handler
        self.videoRead = videoRead
    }

    func cancel() {
        cancelled.store(true, ordering: .relaxed)
    }

    /// Called by the shim; a non-zero result stops the transcode.
    func report(_ done: Double, _ total: Double) -> Int32 {
        handler(done, total)
        return cancelled.load(ordering: .relaxed) ? 1 : 0
    }
}

/// FFmpeg has one log callback per process: its lines go to the logger of the latest running operation.
enum FFmpegLog {
    private static let loggers = NIOLockedValueBox<[(id: UInt64, logger: Logger)]>([])
    private static let counter = Atomic<UInt64>(0)
    private static let installed: Void = {
        ms_set_log_handler(
            { _, level, line in
                guard let line else { return }
                FFmpegLog.forward(level: level, line: String(cString: line))
            }, nil)
    }()

    /// Runs `body` with FFmpeg's log lines sent to `logger` (none: dropped).
    static func routing<T>(to logger: Logger?, _ body: () async -> T) async -> T {
        _ = installed
        guard let logger else { return await body() }
        ms_set_log_level(logger.logLevel <= .debug ? Int32(MS_LOG_INFO.rawValue) : Int32(MS_LOG_WARNING.rawValue))
        let id = counter.add(1, ordering: .relaxed).newValue
        loggers.withLockedValue { $0.append((id, logger)) }
        defer { loggers.withLockedValue { $0.removeAll { $0.id == id } } }
        return await body()
    }

    private static func forward(level: Int32, line: String) {
        guard let logger = loggers.withLockedValue({ $0.last?.logger }) else { return }
        switch UInt32(level) {
        case MS_LOG_ERROR.rawValue: logger.error("ffmpeg: \(line)")
        case MS_LOG_WARNING.rawValue: logger.warning("ffmpeg: \(line)")
        case MS_LOG_INFO.rawValue: logger.debug("ffmpeg: \(line)")
        default: logger.trace("ffmpeg: \(line)")
        }
    }
}

extension MediaInfo {
    init(_ info: ms_media_info) {
        format = Self.string(info.format_name)
        duration = info.duration
        size = info.size
        bitRate = info.bit_rate
        videoStreams = Int(info.video_stream_count)
        audioStreams = Int(info.audio_stream_count)
        subtitleStreams = Int(info.subtitle_stream_count)
        video =
            info.has_video == 0
            ? nil
            : Video(
                codec: Self.string(info.video_codec), width: Int(info.width), height: Int(info.height),
                displayWidth: Int(info.display_width), displayHeight: Int(info.display_height),
                rotation: Int(info.rotation),
                fps: info.fps, pixelFormat: Self.string(info.pixel_format), bitRate: info.video_bit_rate,
                frameCount: info.frame_count)
        audio =
            info.has_audio == 0
            ? nil
            : Audio(
                codec: Self.string(info.audio_codec), sampleRate: Int(info.sample_rate), channels: Int(info.channels),
                bitRate: info.audio_bit_rate)
    }

    /// A fixed-size C char array as a String.
    static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { buffer in
            String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

extension TranscodeReport {
    init(_ result: ms_transcode_result) {
        duration = result.duration
        width = Int(result.display_width)
        height = Int(result.display_height)
        rotation = Int(result.rotation)
        hasAudio = result.has_audio != 0
        size = result.size
        videoFrames = result.video_frames
        decodeErrors = result.decode_errors
        decodedSeconds = result.decoded_seconds
        inputDuration = result.input_duration
    }
}
