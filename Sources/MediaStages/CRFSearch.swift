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

    /// The samples of the range: the whole range when it is short, else ``sampleCount(duration:)`` samples of
    /// ``sampleSeconds`` each, centred in equal parts of the range.
    static func samples(of range: TranscodeSettings.TimeRange, duration: Double) -> [TranscodeSettings.TimeRange] {
        let count = sampleCount(duration: duration)
        guard count > 0 else { return [range] }
        let part = duration / Double(count)
        return (0..<count).map { index in
            let start = range.start + part * (Double(index) + 0.5) - sampleSeconds / 2
            return TranscodeSettings.TimeRange(start: start, end: start + sampleSeconds)
        }
    }

    /// Seconds of one sample.
    static let sampleSeconds = 1.0

    /// Samples for a range of `duration` seconds: 0 (the whole range) up to 20 s; else one per minute, from 3 to 12.
    /// A probe encodes and scores every sample (VMAF costs about what the encode does), and a search takes some 3–6
    /// probes: sampling under 2 % of a source of 3 minutes or more keeps the search's CPU under 30 % of the final
    /// encode's (benchmarks/quality.sh measures it); a shorter source pays relatively more.
    static func sampleCount(duration: Double) -> Int {
        guard duration > 20 else { return 0 }
        return min(12, max(3, Int(duration / 60)))
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
        var references: [String]?
        func probe(_ crf: Double) async throws -> Probe {
            if let made = probes[crf] { return made }
            if references == nil { references = try await referenceSamples(samples) }
            let made = try await encodeProbe(crf, samples: samples, references: references ?? [])
            probes[crf] = made
            try await saved(probes.values.sorted { $0.crf < $1.crf })
            return made
        }
        let cpu = CPUTime.now
        var choice = try await target.choose { try await probe(Double($0)) }
        if settings.codec != .av1 { choice = try await target.refine(choice, probe: probe) }
        logger.info(
            "crf search: CRF \(Self.named(choice.crf)) after \(probes.count - known.count) probe(s) on \(samples.count) sample(s), \(String(format: "%.2f", CPUTime.now - cpu)) s of CPU"
        )
        try? FileManager.default.removeItem(at: folder)
        return (choice, probes.values.sorted { $0.crf < $1.crf })
    }

    /// A CRF as logs and notes name it: "23", "23.25".
    static func named(_ crf: Double) -> String {
        crf.rounded() == crf ? String(Int(crf)) : String(format: "%g", crf)
    }

    /// The source's samples, each encoded losslessly (x264 CRF 0) at the source's size: what the probes are scored
    /// against. Written under a temporary name and renamed, so a sample left by a killed run is whole.
    private func referenceSamples(_ samples: [TranscodeSettings.TimeRange]) async throws -> [String] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var paths: [String] = []
        for (index, sample) in samples.enumerated() {
            let file = folder.appendingPathComponent("source-\(index).mp4")
            if !FileManager.default.fileExists(atPath: file.path) {
                var lossless = TranscodeSettings()
                lossless.crf = 0
                lossless.preset = .ultrafast
                lossless.threads = settings.threads
                try await encode(sample, with: lossless, into: file)
            }
            paths.append(file.path)
        }
        return paths
    }

    /// Encodes every sample at `crf` with the export's settings and scores it against its reference.
    private func encodeProbe(_ crf: Double, samples: [TranscodeSettings.TimeRange], references: [String]) async throws
        -> Probe
    {
        logger.info("crf search: probing CRF \(Self.named(crf)) on \(samples.count) sample(s)")
        var probed = settings
        probed.crf = crf
        var scores: [Double] = []
        var bytes: Int64 = 0
        var seconds = 0.0
        for (index, sample) in samples.enumerated() {
            let file = folder.appendingPathComponent("probe-\(Self.named(crf))-\(index).mp4")
            let report = try await encode(sample, with: probed, into: file)
            bytes += report.size
            seconds += report.duration
            scores += try await MediaToolkit.frameScores(
                reference: references[index], distorted: file.path, metric: target.metric,
                threads: settings.threads, logger: logger)
            try? FileManager.default.removeItem(at: file)
        }
        let pooled = QualityReport(metric: target.metric, scores: scores).value(target.pool)
        let size = Int64((Double(bytes) * duration / max(seconds, 0.001)).rounded())
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

/// The CPU time this process has used, user and system: what a search costs, for its log line.
private enum CPUTime {
    static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
