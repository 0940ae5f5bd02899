import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Finds the highest CRF whose encode of a time range of a source still meets a quality target, as ab-av1 does: a
/// few short samples spread over the range are encoded at a probe CRF with the export's settings, scored against the
/// same samples of the source (``MediaToolkit/measureQuality(reference:distorted:metric:threads:logger:progress:)``),
/// pooled as asked, and the next probe's CRF is interpolated between the probes that bracket the target (typically
/// 3–5 probes). A size budget then raises the CRF until the estimated size fits (``QualityTarget``).
///
/// The search takes a time range, not the whole file, so that a segment of a segmented encode can be searched alike.
/// Every probe is reported to `saved` as it is made, so a run that is killed resumes with the probes it had
/// (``known``).
struct CRFSearch {
    /// One encode of the samples at a CRF.
    typealias Probe = CRFSearchReport.Probe

    /// What the search chose.
    struct Choice: Codable, Equatable, Sendable {
        var crf: Double
        /// Why a budget overrode the target, or why the target cannot be met within the bounds; nil when it is met.
        var note: String?
    }

    let input: String
    /// The export's settings (mode transcode); their CRF is replaced by each probe's.
    let settings: TranscodeSettings
    /// The span of the source searched for: the whole source, or a segment's range.
    let range: TranscodeSettings.TimeRange
    /// The range's duration in seconds.
    let duration: Double
    let target: QualityTarget
    /// Where the samples and their encodes are written.
    let folder: URL
    let logger: Logger

    /// The samples of the range: the whole range when it is short, else ``sampleCount(duration:)`` windows of
    /// ``sampleSeconds`` each, centred in equal parts of the range. Each is encoded with ``warmUp`` before it and
    /// ``coolDown`` after it (within the range) whose frames are left out of its scores (``scoredPart(of:)``).
    static func samples(of range: TranscodeSettings.TimeRange, duration: Double) -> [Sample] {
        let count = sampleCount(duration: duration)
        guard count > 0 else { return [Sample(encoded: range, scored: range)] }
        let part = duration / Double(count)
        let end = range.start + duration
        return (0..<count).map { index in
            let start = range.start + part * (Double(index) + 0.5) - sampleSeconds / 2
            let window = TranscodeSettings.TimeRange(start: start, end: start + sampleSeconds)
            let encoded = TranscodeSettings.TimeRange(
                start: max(range.start, start - warmUp), end: min(end, start + sampleSeconds + coolDown))
            return Sample(encoded: encoded, scored: window)
        }
    }

    /// A sample: the span encoded, and the window within it whose frames are scored.
    struct Sample: Equatable, Sendable {
        var encoded: TranscodeSettings.TimeRange
        var scored: TranscodeSettings.TimeRange

        /// Which of `frames` scores (the encoded span's, in order) fall in the scored window, by their share of the
        /// span's time: the warm-up's frames start cold (a forced IDR picture, a first quantizer lower) and the
        /// cool-down's see the end of the stream in the encoder's lookahead, unlike the same frames of the export.
        func scoredPart(of frames: [Double]) -> ArraySlice<Double> {
            guard let end = encoded.end, let windowEnd = scored.end, end > encoded.start else { return frames[...] }
            let length = end - encoded.start
            let head = Int((Double(frames.count) * (scored.start - encoded.start) / length).rounded())
            let tail = Int((Double(frames.count) * (end - windowEnd) / length).rounded())
            guard head + tail < frames.count else { return frames[...] }
            return frames[head..<(frames.count - tail)]
        }
    }

    /// Seconds of a sample's scored window: at least twice the lookahead of x264's slower presets (40 frames at
    /// 24 fps), so that the encoder's rate control sees the window as it sees the same frames of the export.
    static let sampleSeconds = 4.0
    /// Seconds encoded before a sample's window and left out of its scores.
    static let warmUp = 1.0
    /// Seconds encoded after a sample's window and left out of its scores.
    static let coolDown = 1.0

    /// Samples for a range of `duration` seconds: 0 (the whole range) up to 30 s, where the samples and their margins
    /// would be most of it; else one per two minutes, from 3 to 6. A probe encodes and scores every sample with its
    /// margins, 18 s or more of the source; what that costs against the final encode is for benchmarks/quality.sh to
    /// measure.
    static func sampleCount(duration: Double) -> Int {
        guard duration > 30 else { return 0 }
        return min(6, max(3, Int(duration / 120)))
    }

    /// Runs the search from the probes already `known` (a resumed run's), encoding and scoring a probe only for a CRF
    /// none of them has; `saved` gets every probe list as it grows. Returns the choice and every probe, by CRF.
    /// A search without known probes first empties `folder`: the reference samples in it are reused only by the
    /// search that checkpointed probes against them.
    func run(
        known: [Probe], saved: @escaping @Sendable ([Probe]) async throws -> Void
    ) async throws -> (Choice, [Probe]) {
        var probes = Dictionary(known.map { ($0.crf, $0) }, uniquingKeysWith: { first, _ in first })
        // References left by an earlier search (killed, or for other options or another input) are not this one's.
        if known.isEmpty { try? FileManager.default.removeItem(at: folder) }
        let samples = Self.samples(of: range, duration: duration)
        var references: [(Sample, reference: String)]?
        func probe(_ crf: Double) async throws -> Probe {
            if let made = probes[crf] { return made }
            if references == nil { references = try await referenceSamples(samples) }
            let made = try await encodeProbe(crf, samples: references ?? [])
            probes[crf] = made
            try await saved(probes.values.sorted { $0.crf < $1.crf })
            return made
        }
        var choice = try await target.choose { try await probe(Double($0)) }
        if settings.codec != .av1 { choice = try await target.refine(choice, probe: probe) }
        logger.info(
            "crf search: CRF \(Self.named(choice.crf)) after \(probes.count - known.count) probe(s) on \(references?.count ?? samples.count) sample(s)"
        )
        try? FileManager.default.removeItem(at: folder)
        return (choice, probes.values.sorted { $0.crf < $1.crf })
    }

    /// A CRF as logs and notes name it: "23", "23.25".
    static func named(_ crf: Double) -> String {
        crf.rounded() == crf ? String(Int(crf)) : String(format: "%g", crf)
    }

    /// The source's samples, each encoded losslessly (x264 CRF 0) at the source's size: what the probes are scored
    /// against. Written under a temporary name and renamed, so a sample left by a killed run is whole. A sample
    /// without a video frame (a sparse slideshow's) is left out; when all are, the search fails.
    private func referenceSamples(_ samples: [Sample]) async throws -> [(Sample, reference: String)] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var references: [(Sample, reference: String)] = []
        for (index, sample) in samples.enumerated() {
            let file = folder.appendingPathComponent("source-\(index).mp4")
            let frames: Int64
            if FileManager.default.fileExists(atPath: file.path) {
                frames = try await MediaToolkit.probe(file.path, logger: logger).video?.frameCount ?? 0
            } else {
                var lossless = TranscodeSettings()
                lossless.crf = 0
                lossless.preset = .ultrafast
                lossless.threads = settings.threads
                frames = try await encode(sample.encoded, with: lossless, into: file).videoFrames
            }
            if frames > 0 { references.append((sample, file.path)) }
        }
        guard !references.isEmpty else {
            throw MediaError(code: .noFrames, message: "no sample of the source has a video frame to search a CRF on")
        }
        return references
    }

    /// Encodes every sample at `crf` with the export's settings and scores its window against its reference. The
    /// size is the samples' video packets, per second of them, over the range's duration: each sample has one
    /// keyframe, about what an export has every few seconds.
    private func encodeProbe(_ crf: Double, samples: [(Sample, reference: String)]) async throws -> Probe {
        logger.info("crf search: probing CRF \(Self.named(crf)) on \(samples.count) sample(s)")
        var probed = settings
        probed.crf = crf
        var scores: [Double] = []
        var bytes = 0.0
        var seconds = 0.0
        for (index, (sample, reference)) in samples.enumerated() {
            let file = folder.appendingPathComponent("probe-\(Self.named(crf))-\(index).mp4")
            let report = try await encode(sample.encoded, with: probed, into: file)
            let video = try await MediaToolkit.probe(file.path, logger: logger).video
            bytes += Double(video?.bitRate ?? 0) * report.duration / 8
            seconds += report.duration
            let frames = try await MediaToolkit.frameScores(
                reference: reference, distorted: file.path, metric: target.metric,
                threads: settings.threads, logger: logger)
            scores += sample.scoredPart(of: frames)
            try? FileManager.default.removeItem(at: file)
        }
        let pooled = QualityReport(metric: target.metric, scores: scores).value(target.pool)
        let size = Int64((bytes * duration / max(seconds, 0.001)).rounded())
        logger.info(
            "crf search: CRF \(Self.named(crf)) scores \(target.metric.displayName) \(target.metric.figure(pooled)) (\(target.pool.displayName)), about \(size) bytes of video"
        )
        return Probe(crf: crf, score: pooled, size: size)
    }

    /// Encodes the video of `sample` with `settings` into `file`, written under a temporary name and renamed.
    @discardableResult
    private func encode(
        _ sample: TranscodeSettings.TimeRange, with settings: TranscodeSettings, into file: URL
    ) async throws -> TranscodeReport {
        var settings = settings
        settings.mode = .transcode
        settings.streams = .video
        settings.faststart = false
        settings.range = sample
        let partial = MediaOutput(destination: file).partial
        do {
            let report = try await MediaToolkit.transcode(input, to: partial.path, settings: settings, logger: logger)
            guard rename(partial.path, file.path) == 0 else {
                throw MediaError(
                    code: .outputNotWritable,
                    message: "cannot move a sample into place: \(String(cString: strerror(errno)))")
            }
            return report
        } catch {
            unlink(partial.path)
            throw error
        }
    }
}
