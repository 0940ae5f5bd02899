import Foundation
import StageKit
import StageRuntime

extension Export {
    /// How an export encodes its source: in one piece (a transcode, or a remux), in segments on this machine, or in
    /// segments shared with the workers of a segment farm.
    enum Encoding {
        /// In one piece; `encoderPSNR`: with the encoder's PSNR of each frame.
        case whole(encoderPSNR: Bool)
        case segmented(SegmentedTranscode)
        case farmed(FarmedTranscode)

        /// The encoding `decision` asks for. A segmented export is farmed out only for the item's own file (an
        /// earlier stage's output is on this worker's disk alone), only in H.264 (workers announce the build of
        /// their H.264 encoder alone), and never for an HDR source: its tone mapping (zimg) picks its kernels by
        /// the processor, so two machines may convert a picture differently.
        init(_ decision: Decision, input: String, info: MediaInfo, encoderPSNR: Bool, context: StageContext) {
            guard let (length, jobs, cuts) = decision.segments else {
                self = .whole(encoderPSNR: encoderPSNR)
                return
            }
            let settings = decision.settings
            let indexSpace = SegmentedTranscode.indexSpace(duration: info.duration, source: info, settings: settings)
            if input == context.item.path, settings.codec == .h264, info.video?.highDynamicRange == nil,
                let farm = context.services[SegmentFarmKey.self],
                let store = context.services[SegmentStoreKey.self]
            {
                self = .farmed(
                    FarmedTranscode(
                        input: input, settings: settings, duration: info.duration, hasAudio: info.audio != nil,
                        indexSpace: indexSpace, segmentSeconds: length, cuts: cuts, jobs: jobs, farm: farm,
                        store: store,
                        context: context))
            } else {
                self = .segmented(
                    SegmentedTranscode(
                        input: input, settings: settings, duration: info.duration, hasAudio: info.audio != nil,
                        indexSpace: indexSpace, segmentSeconds: length, cuts: cuts, jobs: jobs,
                        encoderPSNR: encoderPSNR,
                        context: context))
            }
        }

        /// Encodes `input` into the output's temporary file, reporting progress in seconds of the source. Returns
        /// what the encoder reports, and for a farmed export, the plan its workers shared.
        func run(
            _ input: String, to output: MediaOutput, settings: TranscodeSettings, context: StageContext
        ) async throws -> (TranscodeReport, SegmentPlan?) {
            let progress: @Sendable (Double, Double) -> Void = { done, total in
                context.reportProgress(
                    StageProgress(
                        completed: Int64(done), total: total > 0 ? Int64(total.rounded(.up)) : nil, unit: .seconds))
            }
            // A stage that streams this export reads the file as the segments are joined into it.
            let stream = context.services[ExportStreamKey.self].map { ($0, output.destination.path) }
            switch self {
            case .farmed(let farmed):
                return try await farmed.run(to: output.partial.path, stream: stream, progress: progress)
            case .segmented(let segmented):
                return (try await segmented.run(to: output.partial.path, stream: stream, progress: progress), nil)
            case .whole(let encoderPSNR):
                if settings.mode == .remux, let (stream, destination) = stream {
                    // A remux of an MP4 or MOV writes its index into room ahead of the media data: a stage that
                    // streams this export reads the file as it is copied.
                    let report = try await MediaToolkit.remux(
                        input, to: output.partial.path, settings: settings,
                        gate: .streaming(stream, destination: destination, writing: output.partial.path),
                        logger: context.logger, progress: progress)
                    return (report, nil)
                }
                let report = try await MediaToolkit.transcode(
                    input, to: output.partial.path, settings: settings, encoderPSNR: encoderPSNR,
                    logger: context.logger, progress: progress)
                return (report, nil)
            }
        }

        /// Why an encode that asked for the encoder's PSNR got no report of it: libx264 alone hands its PSNR out, and
        /// a segment farm's workers keep theirs.
        func unreported(_ settings: TranscodeSettings) -> String {
            switch (self, settings.codec) {
            case (.farmed, _): "not reported by the segment farm's workers (their encoders' PSNR stays with them)"
            case (_, .hevc): "not reported by libx265"
            case (_, .av1): "not reported by libsvtav1"
            case (_, .h264): "not reported by libx264 for every frame"
            }
        }

        /// Once the export is committed: removes the segments encoded on this machine, or retires the farmed plan.
        func cleanUp(farmedPlan: SegmentPlan?) async {
            switch self {
            case .whole: break
            case .segmented(let segmented): segmented.removeSegments()
            case .farmed(let farmed): if let farmedPlan { await farmed.retire(farmedPlan) }
            }
        }
    }
}
