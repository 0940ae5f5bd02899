import Foundation
import Logging
import StageKit

/// Where the segments of a transcode start, the threads each is encoded with, and the room the joined file's
/// index needs.
extension SegmentedTranscode {
    /// Sources longer than this are segmented when `segmentSeconds` is not given.
    static let automaticAbove = 600.0
    /// The segment length then.
    static let automaticLength = 60.0

    /// The segment length for `option` (0: never) and a source of `duration` seconds; nil: not segmented.
    static func length(option: TimeSpan?, duration: Double) -> Double? {
        let length = option?.seconds ?? (duration > automaticAbove ? automaticLength : 0)
        return length > 0 && duration > length ? length : nil
    }

    /// How far from a multiple of the segment length a scene change may start a segment, as a fraction of the
    /// length: segments cut at scene changes then last between half and one and a half lengths.
    static let sceneWindow = 0.25

    /// The segments' start times: about every `length` seconds. A start is usable when it lies more than half a
    /// segment after the one before and before the source's last second. Near each multiple of `length`: at the
    /// strongest usable one of the `scenes` within ``sceneWindow`` of a length from it (of equal ones the nearest,
    /// then the earlier), else at the usable keyframe of the source nearest to it within half a segment (so no
    /// segment decodes frames before its start only to drop them), else at the multiple itself, when usable (a last
    /// piece under a second joins the one before). So every segment but the last lasts more than half a length and
    /// at most two; the last, more than a second.
    static func starts(duration: Double, length: Double, keyframes: [Double], scenes: [SceneChange] = []) -> [Double] {
        var starts = [0.0]
        var multiple = 1
        var first = 0  // the first keyframe at or after half a segment before the target (targets only grow)
        while Double(multiple) * length < duration - 1 {
            let target = Double(multiple) * length
            multiple += 1
            let last = starts.last ?? 0
            let usable = { (start: Double) in start > last + length / 2 && start < duration - 1 }
            let distance = { (time: Double) in abs(time - target) }
            let cut = scenes.filter { distance($0.time) <= length * sceneWindow && usable($0.time) }.max {
                ($0.score, -distance($0.time)) < ($1.score, -distance($1.time))
            }
            while first < keyframes.count, keyframes[first] < target - length / 2 { first += 1 }
            let keyframe = keyframes[first...].prefix { $0 <= target + length / 2 }.filter(usable).min {
                distance($0) < distance($1)
            }
            if let start = cut?.time ?? keyframe ?? (usable(target) ? target : nil) { starts.append(start) }
        }
        return starts
    }

    /// Where the segments of an encode of `input` start, as `cuts` asks: at its scene changes (a decoding pass over
    /// the video, reported to `progress`) or its keyframes, each near a multiple of `length`.
    static func starts(
        _ input: String, duration: Double, length: Double, cuts: SegmentCuts, logger: Logger?,
        progress: @escaping @Sendable (Double, Double) -> Void = { _, _ in }
    ) async throws -> [Double] {
        let keyframes = try await MediaToolkit.keyframes(input, logger: logger)
        guard cuts == .scenes else { return starts(duration: duration, length: length, keyframes: keyframes) }
        logger?.info("finding the scene changes of the source to cut its segments there")
        let scenes = try await MediaToolkit.sceneChanges(input, logger: logger, progress: progress)
        let starts = starts(duration: duration, length: length, keyframes: keyframes, scenes: scenes)
        let atScenes = Set(scenes.map(\.time)).intersection(starts).count
        logger?.info(
            "\(scenes.count) scene change(s) found; \(atScenes) of \(starts.count - 1) segment joins are at one")
        return starts
    }

    /// The segments of an encode of `input` before any is done: where they start
    /// (``starts(_:duration:length:cuts:logger:progress:)``, whose pass over the source reports to `progress`, or
    /// `saved`'s starts when ``SegmentCuts/takesStarts(cutBy:for:length:)``, so that the pass is made once per item),
    /// the threads each is encoded with and the encoder's build. Segments saved with another plan cannot be joined
    /// with ones encoded now (``Progress/matches(_:)``).
    static func plan(
        _ input: String, duration: Double, segmentSeconds: Double, cuts: SegmentCuts, jobs: Int,
        settings: TranscodeSettings, saved: Progress? = nil, logger: Logger?,
        progress: @escaping @Sendable (Double, Double) -> Void = { _, _ in }
    ) async throws -> Progress {
        let starts: [Double]
        if let saved, cuts.takesStarts(cutBy: saved.cuts, for: saved.length, length: segmentSeconds) {
            starts = saved.starts
        } else {
            starts = try await Self.starts(
                input, duration: duration, length: segmentSeconds, cuts: cuts, logger: logger, progress: progress)
        }
        return Progress(
            starts: starts, cuts: cuts, length: segmentSeconds, threads: pinnedThreads(settings.threads, jobs: jobs),
            encoder: await MediaToolkit.encoderBuild(of: settings.codec), segments: [])
    }

    /// The thread count each of `jobs` segment encodes gets: `threads` (0: x264's own choice for "auto", 1.5
    /// threads per core; fewer leaves cores idle, two threads on two cores encoded a 1080p clip about a quarter
    /// slower) shared among the jobs. Pinned, because x264's output depends on it.
    static func pinnedThreads(_ threads: Int, jobs: Int) -> Int {
        let all = threads > 0 ? threads : max(1, ProcessInfo.processInfo.activeProcessorCount * 3 / 2)
        return max(1, all / jobs)
    }

    /// Room for the index of the joined file, reserved ahead of its media data so that the file is written once
    /// and every byte after its head is final when written (a streaming upload reads it as it grows). The bound
    /// depends only on the settings and the source, so every join of the same encode (streamed or not, after a
    /// crash, on a farm) writes the same bytes.
    ///
    /// Samples per second: the source's video frame rate and a fifth more (no frame is ever added; 120 when the
    /// rate is unknown; never above `maxFPS`, above which frames are dropped), and the AAC frames of the audio's
    /// sample rate (`settings`' or the source's, as AAC takes it; 48 kHz when unknown), each a tenth more. Per
    /// video sample the most the index can take: size, duration, composition offset, sync flag and HEVC's
    /// dependency flags (25 bytes); per audio sample its size (4 bytes: AAC frames all last 1,024 samples). The
    /// join writes each track in runs of ``MediaToolkit/joinChunkSeconds`` (the muxer's runs may fall a little
    /// short: a quarter more), and the muxer also ends a chunk before it would reach 1 MiB (for video, 8 more a
    /// second, enough for 64 Mb/s of frames well under 1 MiB each; beyond that, the slack of the other entries
    /// takes up the difference, or the join writes the file again); each chunk's offset and samples-per-chunk
    /// entry take at most 20 bytes. A text subtitle track (kept as mov_text when the source has audio) gets room
    /// for a cue a second, 64 bytes each: a cue's start and end bound at most two samples (what it shows, alone or
    /// with cues it overlaps, and the gap after it), each with its size, duration and chunk. What the index does
    /// not use stays a `free` box: about 1 % of a 1 Mb/s file at 25 fps.
    static func indexSpace(duration: Double, source: MediaInfo, settings: TranscodeSettings) -> Int64 {
        let rate = source.video?.fps ?? 0
        let fps = min(rate > 0 ? rate * 1.2 : 120, settings.maxFPS ?? .infinity)
        let videoFrames = Int64((duration * fps * 1.1).rounded(.up)) + 64
        let runs = Int64((duration / MediaToolkit.joinChunkSeconds * 1.25).rounded(.up)) + 16
        var chunks = runs + Int64((duration * 8).rounded(.up))
        var audioFrames: Int64 = 0
        if let audio = source.audio {
            // The encoder takes the rate if AAC has it, else the nearest higher one.
            let asked = settings.audioSampleRate ?? (audio.sampleRate > 0 ? audio.sampleRate : 48_000)
            let sampleRate = aacSampleRates.first { $0 >= asked } ?? 96_000
            audioFrames = Int64((duration * Double(sampleRate) / 1024 * 1.1).rounded(.up)) + 64
            chunks += runs
        }
        let cues = source.audio == nil ? 0 : Int64(source.textSubtitleStreams) * Int64(duration.rounded(.up))
        return 65_536 + 25 * videoFrames + 4 * audioFrames + 20 * chunks + 64 * cues
    }

    /// The sample rates AAC has, in rising order.
    private static let aacSampleRates = [
        8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000, 64_000, 88_200, 96_000,
    ]
}
