import Foundation
import Logging
public import StageKit

extension ErrorKind {
    /// An export's quality report missed the bound of its gate (`quality.minQuality`).
    public static let qualityBelowMinimum = ErrorKind("quality-below-minimum")
    /// A gated export whose quality cannot be measured (the source's format, or a changed frame rate): refused before
    /// encoding.
    public static let qualityNotMeasurable = ErrorKind("quality-not-measurable")
}

/// The `quality` option of `ffmpeg.transcode`: the export measured against its source, and the bound it must meet.
struct QualityGate: Sendable {
    var metric: QualityMetric
    /// The figure `minimum` applies to.
    var pool: QualityPool
    /// The lowest pooled score (minQuality); nil: a report only.
    var minimum: Double?

    /// The gate of the options; nil when they ask for no measurement.
    init?(_ options: TranscodeStage.Options.Quality?) {
        guard let options else { return nil }
        metric = options.metric
        pool = options.pool
        minimum = options.minQuality
    }

    /// Why an export of the source `info` describes, with `settings`, cannot be measured, known before encoding:
    /// frames are compared 8-bit 4:2:0 SDR and one for one. Nil when it can be.
    static func unmeasurable(_ info: MediaInfo, settings: TranscodeSettings) -> String? {
        guard let video = info.video else { return "the source has no video" }
        if let hdr = video.highDynamicRange {
            return "the source is HDR (\(hdr)), and its export is tone-mapped to SDR"
        }
        if video.bitDepth > 8 || (!video.chroma.isEmpty && video.chroma != "4:2:0") {
            return
                "the source is \(video.pixelFormat) (\(video.bitDepth)-bit \(video.chroma)), and only 8-bit 4:2:0 is compared"
        }
        if settings.mode == .transcode, let cap = settings.maxFPS, video.fps > cap + 0.01 {
            return
                "the export's frame rate is capped at \(cap) fps, under the source's \(String(format: "%.3g", video.fps)): frames are compared one for one"
        }
        return nil
    }

    /// Measures `export` against `source` and returns the report; throws when it misses the bound.
    func check(
        source: String, export: String, threads: Int, logger: Logger,
        progress: @escaping @Sendable (Double, Double) -> Void
    ) async throws -> QualityReport {
        logger.info("measuring the export's \(metric.displayName) against its source")
        let report = try await MediaToolkit.measureQuality(
            reference: source, distorted: export, metric: metric, threads: threads, logger: logger,
            progress: progress)
        logger.info("quality: \(report)")
        if let failure = failure(of: report) { throw failure }
        return report
    }

    /// Measures the finished export as ``check(source:export:threads:logger:progress:)`` does, reporting progress in
    /// seconds of the source. A report without a gate never discards a good export: when the measurement fails it
    /// returns why instead (cancellation still stops the stage).
    func measure(source: String, export: String, threads: Int, context: StageContext) async throws -> (
        report: QualityReport?, notMeasured: String?
    ) {
        let progress: @Sendable (Double, Double) -> Void = { done, total in
            context.reportProgress(
                StageProgress(
                    completed: Int64(done), total: total > 0 ? Int64(total.rounded(.up)) : nil, unit: .seconds))
        }
        do {
            let report = try await check(
                source: source, export: export, threads: threads, logger: context.logger, progress: progress)
            return (report, nil)
        } catch let error where minimum == nil && !(error is CancellationError) && !Task.isCancelled {
            context.logger.warning("the export lands without a quality report: \(error)")
            return (nil, "\(error)")
        }
    }

    /// The failure for a report that misses the bound, naming the figure, its value and the bound; not retried: the
    /// same encode of the same source scores the same.
    func failure(of report: QualityReport) -> StageFailure? {
        let value = report.value(pool)
        guard let minimum, value < minimum else { return nil }
        return StageFailure(
            "quality gate: \(metric.displayName) \(pool.displayName) \(metric.figure(value, apartFrom: minimum)) is below minQuality \(metric.figure(minimum, apartFrom: value)): \(report)",
            kind: .qualityBelowMinimum, disposition: .fatal)
    }

    /// A `minQuality` outside the metric's range: a bound no export can meet, or one every export meets.
    static func problems(in with: JSONValue) -> [OptionProblem] {
        guard let quality = with["quality"], let bound = quality["minQuality"]?.doubleValue,
            let metric = QualityMetric(rawValue: quality["metric"]?.stringValue ?? QualityMetric.vmaf.rawValue)
        else { return [] }
        let path = JSONPath.root.appending("quality").appending("minQuality")
        let range =
            metric.takesZero
            ? "from 0 to \(metric.figure(metric.highest))" : "above 0 and at most \(metric.figure(metric.highest))"
        let unit = metric == .psnr ? " dB" : ""
        if bound > metric.highest || (!metric.takesZero && bound <= 0) {
            return [
                OptionProblem(
                    at: path,
                    "expected a score \(range)\(unit) for \(metric.rawValue), found \(bound): \(metric.displayName) scores \(range)\(unit)"
                )
            ]
        }
        return []
    }

    /// Whether the options set a bound: an upload that streams the export as it is written would be done before the
    /// gate could stop it.
    static func gates(_ with: JSONValue) -> Bool { with["quality"]?["minQuality"] != nil }
}
