import CMediaShim
import Foundation
public import Logging
import StageKit
import Synchronization

/// FFmpeg through the C shim, as async functions: each call runs on a thread of its own (FFmpeg blocks;
/// see ``BlockingWork/runLong(_:)``),
/// cancelling the calling task stops a transcode within a fraction of a second, and FFmpeg's log lines
/// go to the logger given to the call that made them (see `FFmpegLog`).
public enum MediaToolkit {
    /// The shim's ABI version; the Swift side was written for 11.
    public static var abiVersion: Int { Int(ms_abi_version()) }

    /// Starts loading FFmpeg's libraries on a thread of its own and returns at once. Loading takes some 50 ms
    /// (FFmpeg's and the ~150 libraries they need, mapped and relocated) and happens on the first media call
    /// otherwise: a run that will read media calls this as soon as it has read its workflow, so the libraries load
    /// while it opens its ledger and plans. A failure to load is not reported here: the first media call reports it.
    public static func preload() {
        ms_preload()
    }

    /// Sets what FFmpeg's encoders read from the environment (SVT-AV1's log level, unless the user set it): call
    /// first thing in a process, before other threads read the environment.
    public static func prepareProcess() {
        ms_prepare_process()
    }

    /// Reads container and stream facts.
    public static func probe(_ path: String, logger: Logger? = nil) async throws -> MediaInfo {
        let result: Result<MediaInfo, MediaError> = await FFmpegLog.run(logging: logger, about: path) {
            var info = ms_media_info()
            var message = [CChar](repeating: 0, count: 1024)
            let status = ms_probe(path, &info, &message, message.count)
            guard status == 0 else { return .failure(MediaError(shimCode: status, message: message)) }
            return .success(MediaInfo(info))
        }
        return try result.get()
    }

    /// Writes an MP4 of `input` at `output`; `progress` gets (seconds done, seconds in all). `videoRead` is
    /// called once the video (or its range) is read and decoded, while the encoder still drains its delayed
    /// frames: the moment a segmented transcode starts its next segment. `encoderPSNR`: gather the video
    /// encoder's own PSNR of each frame (``TranscodeReport/encoderPSNR``; H.264 alone reports it).
    public static func transcode(
        _ input: String, to output: String, settings: TranscodeSettings, encoderPSNR: Bool = false,
        logger: Logger? = nil, progress: @escaping @Sendable (Double, Double) -> Void = { _, _ in },
        videoRead: (@Sendable () -> Void)? = nil
    ) async throws -> TranscodeReport {
        try await runShim(about: input, logger: logger, progress: progress, videoRead: videoRead) {
            callback, context, message in
            var options = settings.shimOptions
            if videoRead != nil {
                options.video_read = { context in
                    guard let context else { return }
                    Unmanaged<ProgressRelay>.fromOpaque(context).takeUnretainedValue().videoRead?()
                }
                options.video_read_ctx = context
            }
            var result = ms_transcode_result()
            var scores = ms_quality_scores()
            defer { ms_quality_scores_free(&scores) }
            let status = withUnsafeMutablePointer(to: &scores) { scores in
                if encoderPSNR { options.encoder_psnr = scores }
                return ms_transcode(input, output, &options, callback, context, &result, &message, message.count)
            }
            var report = TranscodeReport(result)
            if encoderPSNR, status >= 0, scores.count > 0 {
                let frames = Array(UnsafeBufferPointer(start: scores.frames, count: Int(scores.count)))
                report.encoderPSNR = frames
                report.encoderQuality = QualityReport(metric: .psnr, scores: frames, source: .encoder)
            }
            return (status, report)
        }
    }

    /// Copies the streams of `input` into an MP4 at `output` as ``transcode(_:to:settings:logger:progress:videoRead:)``
    /// does with `settings.mode` `.remux`, the same bytes, for a reader that follows the file as it is written: when
    /// the index's room can be reserved ahead of the media data (an MP4 or MOV input, with faststart), `gate` is told
    /// every few MiB how far the file is final (``JoinGate/Passage/progressed``), and ``JoinGate/Passage/rewritten``
    /// when the index outgrows its room and the file is written again. Without the room it is never called.
    public static func remux(
        _ input: String, to output: String, settings: TranscodeSettings, gate: JoinGate, logger: Logger? = nil,
        progress: @escaping @Sendable (Double, Double) -> Void = { _, _ in }
    ) async throws -> TranscodeReport {
        var settings = settings
        settings.mode = .remux
        return try await runReporting(about: input, logger: logger, progress: progress) {
            [settings] callback, context, report, message in
            var options = settings.shimOptions
            let gateContext = Unmanaged.passUnretained(gate).toOpaque()
            return withExtendedLifetime(gate) {
                ms_remux_streamed(
                    input, output, &options,
                    { context, part, head, final in
                        guard let context else { return 1 }
                        let gate = Unmanaged<JoinGate>.fromOpaque(context).takeUnretainedValue()
                        return gate.pass(part: Int(part), head: head, final: final) ? 0 : 1
                    }, gateContext, callback, context, &report, &message, message.count)
            }
        }
    }

    /// Makes the renditions of an adaptive streaming ladder in one pass over `input`: the source is decoded once and
    /// every video rendition encodes from the same frames on a thread of its own, so the ladder costs one decode
    /// instead of one per rendition. Each output pairs an MP4's path with its settings, `streams` `.video` for a
    /// video rendition or `.audio` for the audio one (at most one). A rendition is the same MP4, byte for byte,
    /// as ``transcode(_:to:settings:logger:progress:videoRead:)`` makes of it alone. Returns the reports in the
    /// order of `outputs`; `progress` gets (seconds decoded, seconds in all). On failure no output is left.
    public static func transcodeLadder(
        _ input: String, outputs: [(path: String, settings: TranscodeSettings)], logger: Logger? = nil,
        progress: @escaping @Sendable (Double, Double) -> Void = { _, _ in }
    ) async throws -> [TranscodeReport] {
        let paths = outputs.map(\.path)
        let settings = outputs.map(\.settings)
        return try await runShim(about: input, logger: logger, progress: progress) { callback, context, message in
            let options = settings.map(\.shimOptions)
            var pointers = paths.map { strdup($0) }
            defer { pointers.forEach { free($0) } }
            var results = [ms_transcode_result](repeating: ms_transcode_result(), count: paths.count)
            let status = pointers.withUnsafeMutableBufferPointer { pointers in
                pointers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { pointers in
                    ms_transcode_ladder(
                        input, Int32(paths.count), pointers.baseAddress, options, &results, callback, context,
                        &message, message.count)
                }
            }
            return (status, results.map(TranscodeReport.init))
        }
    }

    /// How much of one track a join writes in one run, which the index stores as one chunk (a run also ends
    /// at 1 MiB).
    static let joinChunkSeconds = Double(MS_JOIN_CHUNK_MICROSECONDS) / 1_000_000

    /// Joins by stream copy the video parts of a segmented transcode (each made with `streams` `.video` and
    /// the range starting at its entry of `starts`, in order) and, when given, the audio and the mov_text tracks
    /// of a transcode made with `streams` `.audioAndText`, into one MP4 at `output`, each track in runs of
    /// ``joinChunkSeconds``. With `faststart` and an `indexSpace` the index
    /// goes into room reserved ahead of the media data, so that the file is written once and every byte after
    /// its head is final when written; `gate` then sees the parts go by (``JoinGate``).
    public static func join(
        parts: [String], starts: [Double], audio: String?, to output: String, faststart: Bool,
        indexSpace: Int64 = 0, gate: JoinGate? = nil, logger: Logger? = nil,
        progress: @escaping @Sendable (Double, Double) -> Void = { _, _ in }
    ) async throws -> TranscodeReport {
        try await runReporting(about: output, logger: logger, progress: progress) {
            callback, context, report, message in
            var pointers = parts.map { strdup($0) }
            defer { pointers.forEach { free($0) } }
            let gateContext = gate.map { Unmanaged.passUnretained($0).toOpaque() }
            return withExtendedLifetime(gate) {
                pointers.withUnsafeMutableBufferPointer { pointers in
                    pointers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { pointers in
                        ms_join(
                            pointers.baseAddress, starts, Int32(parts.count), audio, output, faststart ? 1 : 0,
                            indexSpace,
                            gate == nil
                                ? nil
                                : { context, part, head, final in
                                    guard let context else { return 1 }
                                    let gate = Unmanaged<JoinGate>.fromOpaque(context).takeUnretainedValue()
                                    return gate.pass(part: Int(part), head: head, final: final) ? 0 : 1
                                }, gateContext, callback, context, &report, &message, message.count)
                    }
                }
            }
        }
    }

    /// Copies the one stream of `input` (a rendition's MP4) into an HLS rendition of fragmented MP4 segments: the
    /// media playlist at `playlist`, `init.mp4` and `seg_NNNNN.m4s` beside it, a segment starting at the first
    /// keyframe at or after each multiple of `segmentSeconds`.
    public static func packageHLS(
        _ input: String, playlist: String, segmentSeconds: Double, logger: Logger? = nil
    ) async throws {
        _ = try await runReporting(about: input, logger: logger, progress: { _, _ in }) {
            callback, context, _, message in
            ms_package_hls(input, playlist, segmentSeconds, callback, context, &message, message.count)
        }
    }

    /// The presentation times (seconds from the start) of the video keyframes the container indexes, in order
    /// (MP4 and MOV: all of them; other containers: few or none).
    public static func keyframes(_ path: String, logger: Logger? = nil) async throws -> [Double] {
        let result: Result<[Double], MediaError> = await FFmpegLog.run(logging: logger, about: path) {
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
        return try result.get()
    }

    /// The encoder build segments of `codec` are encoded with (`x264-164 lavc-59.37.100 parts-5 cpu-20fd3db`: the
    /// encoder library's version, the libavcodec that drives it, how a part's edges are cut, and the processor
    /// features FFmpeg's code is picked by; `x265-0` when the version is unknown). Outputs of two builds may differ
    /// bit for bit (x264 and the decoders compute the same on every processor, the scaler and the AAC encoder need
    /// not), so a segmented transcode records it with its parts, and workers share a plan's units only with
    /// workers of the same build.
    public static func encoderBuild(of codec: VideoCodec) async -> String {
        await BlockingWork.runLong {
            var version = [CChar](repeating: 0, count: 64)
            let found = ms_library_version(codec.library, &version, version.count) == 0
            let text = String(decoding: version.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let lavc = ms_avcodec_version()
            return
                "\(codec.library)-\(found ? text : "0") lavc-\(lavc >> 16).\((lavc >> 8) & 0xFF).\(lavc & 0xFF) parts-\(MS_PART_FORMAT) cpu-\(String(ms_cpu_flags(), radix: 16))"
        }
    }

    /// The build of H.264 encodes (``encoderBuild(of:)``): a worker encodes units of the plans made with it.
    public static var encoderBuild: String {
        get async { await encoderBuild(of: .h264) }
    }

    /// Runs a shim call about the file at `subject` that reports progress and fills a result, on a thread of its own.
    /// Cancelling the calling task stops it within a fraction of a second (``CancellationError``).
    private static func runReporting(
        about subject: String, logger: Logger?, progress: @escaping @Sendable (Double, Double) -> Void,
        videoRead: (@Sendable () -> Void)? = nil,
        _ call:
            @escaping @Sendable (
                ms_progress_fn, UnsafeMutableRawPointer, inout ms_transcode_result, inout [CChar]
            ) -> Int32
    ) async throws -> TranscodeReport {
        try await runShim(about: subject, logger: logger, progress: progress, videoRead: videoRead) {
            callback, context, message in
            var report = ms_transcode_result()
            let status = call(callback, context, &report, &message)
            return (status, TranscodeReport(report))
        }
    }

    /// Runs a shim call about the file at `subject` that reports progress and returns a status with what it made, on a
    /// thread of its own. Cancelling the calling task stops it within a fraction of a second (``CancellationError``).
    static func runShim<Made: Sendable>(
        about subject: String, logger: Logger?, progress: @escaping @Sendable (Double, Double) -> Void,
        videoRead: (@Sendable () -> Void)? = nil,
        _ call: @escaping @Sendable (ms_progress_fn, UnsafeMutableRawPointer, inout [CChar]) -> (Int32, Made)
    ) async throws -> Made {
        let relay = ProgressRelay(progress, videoRead: videoRead)
        let result: Result<Made, MediaError> = await withTaskCancellationHandler {
            await FFmpegLog.run(logging: logger, about: subject) {
                var message = [CChar](repeating: 0, count: 1024)
                let context = Unmanaged.passUnretained(relay).toOpaque()
                let (status, made) = withExtendedLifetime(relay) {
                    call(
                        { context, done, total in
                            guard let context else { return 1 }
                            return Unmanaged<ProgressRelay>.fromOpaque(context).takeUnretainedValue().report(
                                done, total)
                        }, context, &message)
                }
                guard status == 0 else { return .failure(MediaError(shimCode: status, message: message)) }
                return .success(made)
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
        let result: Result<(width: Int, height: Int), MediaError> = await FFmpegLog.run(
            logging: logger, about: input
        ) {
            var width: Int32 = 0
            var height: Int32 = 0
            var message = [CChar](repeating: 0, count: 1024)
            let status = ms_thumbnail(
                input, output, seconds ?? -1, Int32(maxWidth), &width, &height, &message, message.count)
            guard status == 0 else { return .failure(MediaError(shimCode: status, message: message)) }
            return .success((Int(width), Int(height)))
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
