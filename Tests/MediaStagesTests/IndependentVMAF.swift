import Foundation
import StageKit
import TestSupport
import Testing

@testable import MediaStages

/// libvmaf through the static FFmpeg that the pip package imageio-ffmpeg ships: a measurement of exports that owes
/// nothing to the shim's.
struct IndependentVMAF {
    /// The FFmpeg executable.
    let ffmpeg: String

    /// Finds the FFmpeg of imageio-ffmpeg; fails the test when it is missing.
    init() async throws {
        let found = await runTool(
            "/usr/bin/env", ["python3", "-c", "import imageio_ffmpeg; print(imageio_ffmpeg.get_ffmpeg_exe())"])
        let path = String(decoding: found.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(
            found.status == 0 && !path.isEmpty,
            "imageio-ffmpeg is missing (pip install imageio-ffmpeg, or scripts/install-deps.sh): \(found.stderr)")
        ffmpeg = path
    }

    /// The score of `export` against `source`, pooled as `pool` (mean, or the mean of the worst 1 % of frames from
    /// its per-frame scores); its log is written beside the export.
    func score(_ export: URL, against source: URL, pool: QualityPool) async throws -> Double {
        let log = export.deletingLastPathComponent().appendingPathComponent("\(export.lastPathComponent).vmaf.json")
        let ran = await runTool(
            ffmpeg,
            [
                "-nostdin", "-v", "error", "-i", export.path, "-i", source.path, "-lavfi",
                "libvmaf=model=version=vmaf_v0.6.1:log_fmt=json:log_path=\(log.path)", "-f", "null", "-",
            ])
        try #require(ran.status == 0, "\(ran.stderr)")
        let json = try JSONValue(parsing: try Data(contentsOf: log))
        let frames = try #require(json["frames"]?.arrayValue).compactMap { $0["metrics"]?["vmaf"]?.doubleValue }
        return QualityReport(metric: .vmaf, scores: frames).value(pool)
    }
}
