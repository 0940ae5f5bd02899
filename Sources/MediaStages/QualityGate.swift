import Foundation
import Logging
public import StageKit

extension ErrorKind {
    /// An export's quality report missed a bound of its gate (`quality.minQuality`, `quality.minOnePercentLow`).
    public static let qualityBelowMinimum = ErrorKind("quality-below-minimum")
}

/// The `quality` option of `ffmpeg.transcode`: the export measured against its source, and the bounds it must meet.
struct QualityGate: Sendable {
    var metric: QualityMetric
    /// The lowest mean score (minQuality).
    var minMean: Double?
    /// The lowest mean of the worst 1 % of frames (minOnePercentLow).
    var minOnePercentLow: Double?

    /// The gate of the options; nil when they ask for no measurement.
    init?(_ options: TranscodeStage.Options.Quality?) {
        guard let options, options.metric != .none else { return nil }
        metric = options.metric
        minMean = options.minQuality
        minOnePercentLow = options.minOnePercentLow
    }

    /// Measures `export` against `source` and returns the report; throws when it misses a bound.
    func check(source: String, export: String, threads: Int, logger: Logger) async throws -> QualityReport {
        logger.info("measuring the export's \(metric.displayName) against its source")
        let report = try await MediaToolkit.measureQuality(
            reference: source, distorted: export, metric: metric, threads: threads, logger: logger)
        logger.info("quality: \(report)")
        if let failure = failure(of: report) { throw failure }
        return report
    }

    /// The failure for a report that misses a bound, naming the figure, its value and the bound; not retried: the
    /// same encode of the same source scores the same.
    func failure(of report: QualityReport) -> StageFailure? {
        let digits = metric == .ssim ? 4 : 2
        func figure(_ value: Double) -> String { String(format: "%.\(digits)f", value) }
        var missed: [String] = []
        if let bound = minMean, report.mean < bound {
            missed.append("mean \(figure(report.mean)) is below minQuality \(figure(bound))")
        }
        if let bound = minOnePercentLow, report.onePercentLow < bound {
            missed.append("1 % low \(figure(report.onePercentLow)) is below minOnePercentLow \(figure(bound))")
        }
        guard !missed.isEmpty else { return nil }
        return StageFailure(
            "quality gate: \(metric.displayName) \(missed.joined(separator: " and ")): \(report)",
            kind: .qualityBelowMinimum, disposition: .fatal)
    }

    /// A bound without a metric to measure it with.
    static func problems(in with: JSONValue) -> [OptionProblem] {
        guard let quality = with["quality"], quality["metric"]?.stringValue == QualityMetric.none.rawValue else {
            return []
        }
        return ["minQuality", "minOnePercentLow"].filter { quality[$0] != nil }.map {
            OptionProblem(
                at: JSONPath.root.appending("quality").appending($0), "\($0) needs a metric, but the metric is none")
        }
    }

    /// Whether the options set a bound: an upload that streams the export as it is written would be done before the
    /// gate could stop it.
    static func gates(_ with: JSONValue) -> Bool {
        guard let quality = with["quality"], quality["metric"]?.stringValue != QualityMetric.none.rawValue else {
            return false
        }
        return quality["minQuality"] != nil || quality["minOnePercentLow"] != nil
    }
}
