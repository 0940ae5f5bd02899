import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import StageKit
import StageRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// A transcode in segments, so that a crash loses one segment's work, not the whole encode.
///
/// The video is encoded segment by segment, each its own encode of an exact time range of the source (the
/// shim seeks to the range, encodes exactly its frames, and starts it with an IDR frame), with the same
/// settings and a pinned thread count (x264's and x265's output depends on it). Each finished segment is written
/// atomically, fingerprinted and checkpointed with the thread count and the encoder's build; after a crash the
/// segments are verified and reused, and encoding goes on at the first missing one. A segment whose frames
/// are all read lets the next one start while its encoder drains. The audio is encoded once, in one pass (AAC
/// per segment would click at every join). Segments and audio are then joined by stream copy
/// (``MediaToolkit/join(parts:starts:audio:to:faststart:indexSpace:gate:logger:progress:)``), into room for the
/// index reserved up front (``indexSpace(duration:source:settings:)``); a streamed export joins each segment as
/// it arrives and publishes what is final (``ExportStream``).
struct SegmentedTranscode {
    /// What a crash leaves to the next run: the segments encoded so far and what they were encoded with.
    struct Progress: Codable, Equatable {
        var starts: [Double]
        /// The rule the starts were cut by; nil in a plan saved before there was a choice (cut at keyframes).
        var cuts: SegmentCuts?
        /// The segment length the starts were cut for; nil in a plan saved before it was recorded.
        var length: Double?
        var threads: Int
        /// ``MediaToolkit/encoderBuild(of:)``.
        var encoder: String
        var segments: [Segment]

        /// Whether segments of `other` can be joined with ones encoded now: the same starts (whatever rule cut
        /// them), threads and encoder.
        func matches(_ other: Progress) -> Bool {
            starts == other.starts && threads == other.threads && encoder == other.encoder
        }

        /// Segment `index`'s time range of the source, [start, end): where per-segment settings (a CRF each)
        /// apply. The last one runs to `duration`.
        func range(of index: Int, duration: Double) -> Range<Double> {
            starts[index]..<(index + 1 < starts.count ? starts[index + 1] : duration)
        }
    }

    /// One finished segment.
    struct Segment: Codable, Equatable {
        var index: Int
        var size: Int64
        var sha256: String
        /// How many frames' encoder PSNR its scores file holds (``scoresFile(_:)``), when asked for and reported:
        /// the scores stay beside the part, so that a resumed encode pools every frame as one encode would.
        var psnrFrames: Int?
    }

    let input: String
    /// The transcode's settings (mode transcode).
    let settings: TranscodeSettings
    /// The source's duration in seconds.
    let duration: Double
    let hasAudio: Bool
    /// Room reserved for the joined file's index (``indexSpace(duration:source:settings:)``).
    let indexSpace: Int64
    let segmentSeconds: Double
    /// Where the segments start.
    let cuts: SegmentCuts
    /// Segments encoded at once.
    let jobs: Int
    /// Whether the encoder's PSNR of each frame is gathered and pooled (``TranscodeReport/encoderQuality``).
    let encoderPSNR: Bool
    let context: StageContext

    /// Where the segments and the audio wait for the join: the stage's scratch folder.
    var folder: URL { context.scratchFolder.appendingPathComponent("segments") }

    private func segmentFile(_ index: Int) -> URL {
        folder.appendingPathComponent(String(format: "part-%05d.mp4", index))
    }

    /// Encodes what is missing and joins everything into `output`. With `stream`, the join runs beside the
    /// encode: it appends each segment as soon as it is in place (after the audio pass, which is quick), and
    /// publishes what of `output` is final, for the upload that streams it to `destination`.
    func run(
        to output: String, stream: (ExportStream, destination: String)? = nil,
        progress: @escaping @Sendable (Double, Double) -> Void
    ) async throws -> TranscodeReport {
        let saved = savedProgress()
        var state = try await Self.plan(
            input, duration: duration, segmentSeconds: segmentSeconds, cuts: cuts, jobs: jobs, settings: settings,
            saved: saved, logger: context.logger, progress: progress)  // the scene pass: a phase of its own
        let (starts, threads) = (state.starts, state.threads)
        if let saved {
            if saved.matches(state) {
                state.segments = saved.segments.filter(verified)
            } else {
                context.logger.notice(
                    "starting the segments over: they were encoded with \(saved.threads) thread(s), \(saved.encoder) and \(saved.starts.count) segments cut at \(saved.cuts ?? .keyframes), now \(threads), \(state.encoder) and \(starts.count) cut at \(cuts)"
                )
            }
        }
        if cuts == .scenes, saved.map({ !$0.matches(state) }) ?? true {
            // The scene changes cost a pass over the source: a crash before the first segment is done keeps them.
            try await context.checkpoint(state)
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let done = Set(state.segments.map(\.index))
        let missing = starts.indices.filter { !done.contains($0) }
        context.logger.info(
            "segmented transcode: \(starts.count) segments of about \(segmentSeconds) s, \(done.count) reused, \(missing.count) to encode"
        )
        let meter = SegmentMeter(
            total: duration, done: done.reduce(0) { $0 + seconds(state.range(of: $1, duration: duration)) },
            report: progress)
        let join = Join(
            input: input, parts: starts.indices.map { segmentFile($0).path }, starts: starts, output: output,
            faststart: settings.faststart,
            indexSpace: indexSpace)
        guard let stream else {
            // The audio pass runs beside the segments: it is cheap, and after a crash it is simply done again.
            async let audioPass = encodeAudio()
            let encoded = try await encodeSegments(missing, state: state, threads: threads, meter: meter)
            let audio = try await audioPass
            return finished(
                try await join.run(audio: audio, gate: nil, context: context), encoded: encoded, starts: starts)
        }
        let arrivals = PartArrivals(done)
        let reused = state
        let gate = JoinGate.streaming(stream.0, destination: stream.destination, writing: output, arrivals: arrivals)
        let (encoded, joined) = try await joinBeside(arrivals: arrivals) {
            try await encodeSegments(missing, state: reused, threads: threads, meter: meter, arrived: arrivals.add)
        } join: {
            let audio = try await encodeAudio()
            context.logger.info("joining the segments as they are encoded, for the upload that streams them")
            return try await join.run(audio: audio, gate: gate, context: context)
        }
        return finished(joined, encoded: encoded, starts: starts)
    }

    /// The join's report with what the segments' encodes tell: unreadable packets, the source's duration, and the
    /// encoder's PSNR pooled over every segment's frames (nil unless every segment has it).
    private func finished(
        _ joined: TranscodeReport, encoded: (decodeErrors: Int64, segments: [Segment]), starts: [Double]
    ) -> TranscodeReport {
        var report = joined
        report.decodeErrors = encoded.decodeErrors
        report.inputDuration = duration
        let segments = encoded.segments.sorted { $0.index < $1.index }
        guard encoderPSNR, !segments.isEmpty else { return report }
        switch pooledScores(segments) {
        case .success(let scores):
            report.encoderQuality = QualityReport(
                metric: .psnr, segments: scores, starts: segments.map { starts[$0.index] }, source: .encoder)
        case .failure(let missing):
            report.encoderQualityNotReported = missing.reason
        }
        return report
    }

    /// Encodes the `missing` segments, `jobs` at a time, checkpointing each one as it is in place (then
    /// `arrived` is told); returns the packets the decoder could not read, and every segment, reused or encoded.
    private func encodeSegments(
        _ missing: [Int], state: Progress, threads: Int, meter: SegmentMeter,
        arrived: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws -> (decodeErrors: Int64, segments: [Segment]) {
        var state = state
        let plan = state
        var decodeErrors: Int64 = 0
        // `jobs` segments are read and encoded at once. A segment whose video is read lets the next one
        // start while its encoder drains the last frames: x264's threads run out of work there, and the new
        // segment's first frames fill the cores. For that moment `jobs + 1` encoders are open.
        // SVT-AV1 crashed now and then (SIGSEGV) with a second encoder of the process opening while one ran:
        // its segments are encoded one after another.
        let alone = settings.codec == .av1
        let (events, post) = AsyncThrowingStream<SegmentEvent, any Error>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            var queue = missing.makeIterator()
            var reading = Set<Int>()
            var running = 0
            func launch() {
                guard let index = queue.next() else { return }
                reading.insert(index)
                running += 1
                group.addTask {
                    do {
                        let (segment, report) = try await encode(
                            index, plan: plan, threads: threads, meter: meter,
                            videoRead: { post.yield(.read(index)) })
                        post.yield(.finished(segment, report))
                    } catch {
                        post.finish(throwing: error)
                    }
                }
            }
            for _ in 0..<(alone ? 1 : jobs) { launch() }
            guard running > 0 else { return }  // every segment was reused
            for try await event in events {
                switch event {
                case .read(let index):
                    if !alone, reading.remove(index) != nil { launch() }
                case .finished(let segment, let report):
                    running -= 1
                    if reading.remove(segment.index) != nil { launch() }
                    state.segments.append(segment)
                    decodeErrors += report.decodeErrors
                    try await context.checkpoint(state)
                    arrived(segment.index)
                }
                if running == 0 { break }
            }
            // The events end early only when the task is cancelled.
            guard running == 0 else { throw CancellationError() }
        }
        return (decodeErrors, state.segments)
    }

    /// Encodes the audio alone, in one pass, into the segments' folder; nil when the source has none.
    private func encodeAudio() async throws -> String? {
        guard hasAudio else { return nil }
        let audio = folder.appendingPathComponent("audio.mp4").path
        var settings = settings
        settings.streams = .audioAndText
        settings.faststart = false
        context.logger.info("encoding the audio in one pass")
        _ = try await MediaToolkit.transcode(input, to: audio, settings: settings, logger: context.logger)
        return audio
    }

    /// Removes the segments, their scores and the audio once the joined file is in place.
    func removeSegments() {
        try? FileManager.default.removeItem(at: folder)
    }

    private func savedProgress() -> Progress? {
        guard context.savedCheckpoint?["segments"] != nil else { return nil }
        return context.lastCheckpoint(as: Progress.self)
    }

    /// Whether the segment's file is there with the size and digest it was checkpointed with.
    private func verified(_ segment: Segment) -> Bool {
        let file = segmentFile(segment.index)
        guard MediaOutput.size(of: file) == segment.size, (try? Self.sha256(of: file)) == segment.sha256 else {
            context.logger.notice("segment \(segment.index + 1) is missing or changed: encoding it again")
            return false
        }
        return true
    }

    private func seconds(_ range: Range<Double>) -> Double { range.upperBound - range.lowerBound }

    /// Encodes segment `index` into its file (written under a temporary name, synced, then renamed);
    /// `videoRead` is called once its range is read and the encoder drains.
    private func encode(
        _ index: Int, plan: Progress, threads: Int, meter: SegmentMeter,
        videoRead: @escaping @Sendable () -> Void
    ) async throws -> (Segment, TranscodeReport) {
        let range = plan.range(of: index, duration: duration)
        let last = index + 1 == plan.starts.count
        var settings = settings
        settings.streams = .video
        settings.threads = threads
        settings.faststart = false
        settings.range = TranscodeSettings.TimeRange(start: range.lowerBound, end: last ? nil : range.upperBound)
        let file = segmentFile(index)
        let partial = MediaOutput(destination: file).partial
        context.logger.info("encoding segment \(index + 1) of \(plan.starts.count)")
        let start = range.lowerBound
        do {
            let report = try await MediaToolkit.transcode(
                input, to: partial.path, settings: settings, encoderPSNR: encoderPSNR, logger: context.logger,
                progress: { done, _ in meter.update(index, max(0, done - start)) }, videoRead: videoRead)
            try MediaOutput.sync(partial)
            guard rename(partial.path, file.path) == 0 else {
                throw MediaError(
                    code: .outputNotWritable,
                    message: "cannot move segment \(index + 1) into place: \(String(cString: strerror(errno)))")
            }
            if let scores = report.encoderPSNR { try writeScores(scores, of: index) }
            meter.update(index, seconds(range))
            let segment = Segment(
                index: index, size: MediaOutput.size(of: file) ?? 0, sha256: try Self.sha256(of: file),
                psnrFrames: report.encoderPSNR?.count)
            return (segment, report)
        } catch {
            unlink(partial.path)
            throw error
        }
    }

    /// SHA-256 of a whole file.
    static func sha256(of url: URL) throws -> String {
        var hasher = SHA256()
        try FileHashing.update(&hasher, path: url.path, ranges: [(0, nil)]) {
            MediaError(code: .outputNotWritable, message: "cannot read \(url.path): \($0)")
        }
        return HexDigest.text(hasher.finalize())
    }
}

/// What a running segment tells the loop that starts segments and checkpoints them.
private enum SegmentEvent: Sendable {
    /// The segment's video is read: its encoder drains, and the next segment may start.
    case read(Int)
    /// The segment is in place.
    case finished(SegmentedTranscode.Segment, TranscodeReport)
}

/// Seconds of the source encoded so far, over all segments: the reused ones plus each running one's part.
private final class SegmentMeter: Sendable {
    private let total: Double
    private let done: Double
    private let running = NIOLockedValueBox<[Int: Double]>([:])
    private let report: @Sendable (Double, Double) -> Void

    init(total: Double, done: Double, report: @escaping @Sendable (Double, Double) -> Void) {
        self.total = total
        self.done = done
        self.report = report
    }

    func update(_ index: Int, _ seconds: Double) {
        let sum = running.withLockedValue { running in
            running[index] = seconds
            return running.values.reduce(0, +)
        }
        report(min(total, done + sum), total)
    }
}
