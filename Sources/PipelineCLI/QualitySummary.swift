import Foundation

import enum StageKit.JSONValue

/// A stage's `quality` output (an export's quality report: metric, mean, 1 % low, worst frame, worst segment) as
/// one line for people, as `pipeline status` prints it under its table.
enum QualitySummary {
    /// "PSNR 41.20 (1 % low 38.90, worst 38.52 at frame 700, worst segment 2 at 40.10, 1200 frames, the encoder's)"; nil
    /// when `outputs` has no report.
    static func line(_ outputs: JSONValue?) -> String? {
        guard let quality = outputs?["quality"], let metric = quality["metric"]?.stringValue,
            let mean = quality["mean"]?.doubleValue, let low1 = quality["low1"]?.doubleValue,
            let worst = quality["worst"]?.doubleValue
        else { return nil }
        let digits = metric == "ssim" ? 4 : 2
        func figure(_ value: Double) -> String { String(format: "%.\(digits)f", value) }
        var parts = ["1 % low \(figure(low1))", "worst \(figure(worst))"]
        if let frame = quality["worstFrame"]?.intValue { parts[1] += " at frame \(frame)" }
        if let segment = quality["worstSegment"], let index = segment["index"]?.intValue,
            let segmentMean = segment["mean"]?.doubleValue
        {
            parts.append("worst segment \(index + 1) at \(figure(segmentMean))")
        }
        if let frames = quality["frames"]?.intValue { parts.append("\(frames) frames") }
        if let source = quality["source"]?.stringValue { parts.append(source == "encoder" ? "the encoder's" : source) }
        return "\(metric.uppercased()) \(figure(mean)) (\(parts.joined(separator: ", ")))"
    }
}
