import CMediaShim
import Foundation
public import Logging

extension MediaToolkit {
    /// Scores every frame of `distorted` (an encode) against the frame of the same position in `reference` (its
    /// source) with `metric`, and pools them (``QualityReport``). The reference must be 8-bit 4:2:0 SDR video; the
    /// distorted frames are scaled to its size. VMAF runs in this process (libvmaf, model vmaf_v0.6.1); SSIM and PSNR
    /// through FFmpeg's `ssim` and `psnr` filters. `threads`: 0 for one per core. `progress` gets (seconds of the
    /// reference compared, its duration); cancelling the calling task stops the measurement within a frame.
    public static func measureQuality(
        reference: String, distorted: String, metric: QualityMetric, threads: Int = 0, logger: Logger? = nil,
        progress: @escaping @Sendable (Double, Double) -> Void = { _, _ in }
    ) async throws -> QualityReport {
        QualityReport(
            metric: metric,
            scores: try await frameScores(
                reference: reference, distorted: distorted, metric: metric, threads: threads, logger: logger,
                progress: progress))
    }

    /// Every frame's score of `distorted` against `reference` with `metric`, in display order, as
    /// ``measureQuality(reference:distorted:metric:threads:logger:progress:)`` pools them.
    static func frameScores(
        reference: String, distorted: String, metric: QualityMetric, threads: Int = 0, logger: Logger? = nil,
        progress: @escaping @Sendable (Double, Double) -> Void = { _, _ in }
    ) async throws -> [Double] {
        let shimMetric: ms_quality_metric
        switch metric {
        case .vmaf: shimMetric = MS_QUALITY_VMAF
        case .ssim: shimMetric = MS_QUALITY_SSIM
        case .psnr: shimMetric = MS_QUALITY_PSNR
        }
        return try await runShim(about: distorted, logger: logger, progress: progress) {
            callback, context, message in
            var measured = ms_quality_scores()
            defer { ms_quality_scores_free(&measured) }
            let status = ms_quality(
                reference, distorted, shimMetric, Int32(threads), callback, context, &measured, &message,
                message.count)
            let frames =
                status == 0 ? Array(UnsafeBufferPointer(start: measured.frames, count: Int(measured.count))) : []
            return (status, frames)
        }
    }
}
