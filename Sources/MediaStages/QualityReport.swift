import Foundation
public import StageKit

/// What an export's quality is measured with, against its source.
public enum QualityMetric: String, OptionChoice, Codable {
    /// VMAF, model vmaf_v0.6.1: 0–100.
    case vmaf
    /// SSIM of the three planes weighted by their size: 0–1.
    case ssim
    /// PSNR of the planes' mean squared error weighted by their size, in dB (a frame identical to its source counts
    /// as 100 dB).
    case psnr

    /// The model the scores come from, for VMAF.
    public var model: String? { self == .vmaf ? "vmaf_v0.6.1" : nil }

    /// The metric's name as people write it.
    public var displayName: String {
        switch self {
        case .vmaf: "VMAF"
        case .ssim: "SSIM"
        case .psnr: "PSNR"
        }
    }

    /// The highest score a frame can have: VMAF 100, SSIM 1, PSNR 100 dB (an identical frame).
    public var highest: Double { self == .ssim ? 1 : 100 }

    /// Whether a score of 0 is one a bound may name: not for PSNR, whose scores are above 0 dB.
    var takesZero: Bool { self != .psnr }

    /// `value` as reports print it: SSIM with 4 decimals, the others with 2; more when that would print `other` the
    /// same although the two differ, so that "89.996 is below 90" never reads "90.00 is below 90.00".
    func figure(_ value: Double, apartFrom other: Double? = nil) -> String {
        var digits = self == .ssim ? 4 : 2
        func printed(_ x: Double) -> String { String(format: "%.\(digits)f", x) }
        while let other, other != value, digits < 12, printed(value) == printed(other) { digits += 1 }
        return printed(value)
    }
}

/// Which figure of a ``QualityReport`` a bound applies to.
public enum QualityPool: String, OptionChoice, Codable {
    /// The mean of every frame's score.
    case mean
    /// The mean of the worst 1 % of the frames.
    case low1

    /// The figure's name as messages print it.
    var displayName: String { self == .mean ? "mean" : "1 % low" }
}

/// Where a ``QualityReport``'s scores come from.
public enum QualitySource: String, Codable, Sendable, Hashable {
    /// The video encoder's own PSNR of each frame against the picture it was given (libx264's per-frame report):
    /// what every export reports unless the workflow asks for a measurement (its cost is within the noise of the benchmark, see docs/benchmarks.md).
    case encoder
    /// The finished export decoded and compared with its source, frame by frame (the option `quality`).
    case measured
}

/// How close an encode is to its source: per-frame scores of one metric, pooled three ways.
///
/// - `mean`: the mean of every frame's score.
/// - `low1`: the mean of the worst 1 % of the frames: the scores sorted from worst up, the first
///   ⌈n / 100⌉ of them (at least one frame, so a clip of under 100 frames gives its worst frame), averaged. It shows a
///   short stretch of poor pictures that the mean of a long file hides.
/// - `worst`: the lowest frame score, and `worstFrame` its index (0-based, display order; the first of equals).
///
/// A segmented export pools the frames of all its segments (the same figures as one list of every frame) and names
/// its segment of the lowest mean (`worstSegment`).
public struct QualityReport: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The metric's name: vmaf, ssim or psnr.
    public var metric: String
    /// Where the scores come from.
    public var source: QualitySource?
    /// The VMAF model; absent for the other metrics.
    public var model: String?
    /// Frames compared.
    public var frames: Int
    /// The mean of every frame's score.
    public var mean: Double
    /// The mean of the worst 1 % of the frames (at least one).
    public var low1: Double
    /// The lowest frame score.
    public var worst: Double
    /// The index of the frame with the lowest score.
    public var worstFrame: Int
    /// A segmented export's segment of the lowest mean score; absent for an export in one piece.
    public var worstSegment: SegmentScore?

    /// A segment's figures in a segmented export's report.
    public struct SegmentScore: Codable, Sendable, Hashable {
        /// The segment's index (0-based).
        public var index: Int
        /// Where it starts in the source, in seconds.
        public var start: Double
        /// Its frames.
        public var frames: Int
        /// The mean of its frames' scores.
        public var mean: Double
    }

    /// Pools `scores` (one per frame, in display order; not empty) of `metric`, which come from `source`.
    public init(metric: QualityMetric, scores: [Double], source: QualitySource = .measured) {
        self.metric = metric.rawValue
        self.source = source
        self.model = metric.model
        frames = scores.count
        mean = scores.isEmpty ? 0 : scores.reduce(0, +) / Double(scores.count)
        let sorted = scores.sorted()
        let low = sorted.prefix(Swift.max(1, (scores.count + 99) / 100))
        low1 = low.isEmpty ? 0 : low.reduce(0, +) / Double(low.count)
        worst = sorted.first ?? 0
        worstFrame = scores.firstIndex(of: worst) ?? 0
    }

    /// Pools the scores of a segmented export's segments (`segments[i]`: segment i's frames in display order,
    /// starting at `starts[i]` seconds) as one list of every frame, and names the segment of the lowest mean.
    public init(metric: QualityMetric, segments: [[Double]], starts: [Double], source: QualitySource) {
        self.init(metric: metric, scores: Array(segments.joined()), source: source)
        let scored = segments.indices.filter { !segments[$0].isEmpty }
        worstSegment =
            scored.map { index in
                SegmentScore(
                    index: index, start: starts[index], frames: segments[index].count,
                    mean: segments[index].reduce(0, +) / Double(segments[index].count))
            }.min { $0.mean < $1.mean }
    }

    /// The figure `pool` names.
    public func value(_ pool: QualityPool) -> Double { pool == .mean ? mean : low1 }

    /// "VMAF 94.12 (1 % low 88.40, worst 85.03 at frame 17, 240 frames, model vmaf_v0.6.1)"; "PSNR 41.20 (1 % low
    /// 38.90, worst 38.52 at frame 700, worst segment 2 at 40.10, 1200 frames, the encoder's)".
    public var description: String {
        let known = QualityMetric(rawValue: metric)
        func figure(_ value: Double) -> String { known?.figure(value) ?? "\(value)" }
        let model = model.map { ", model \($0)" } ?? ""
        let segment = worstSegment.map { ", worst segment \($0.index + 1) at \(figure($0.mean))" } ?? ""
        let origin = source == .encoder ? ", the encoder's" : ""
        return
            "\(known?.displayName ?? metric) \(figure(mean)) (1 % low \(figure(low1)), worst \(figure(worst)) at frame \(worstFrame)\(segment), \(frames) frames\(model)\(origin))"
    }
}
