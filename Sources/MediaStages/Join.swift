import CMediaShim
import Logging
import StageKit

/// The join of the segments and the audio into the output.
struct Join {
    /// The source the parts were encoded from.
    let input: String
    let parts: [String]
    let starts: [Double]
    let output: String
    let faststart: Bool
    /// Room reserved for the index, with faststart (0: +faststart).
    let indexSpace: Int64

    func run(audio: String?, gate: JoinGate?, context: StageContext) async throws -> TranscodeReport {
        let report: TranscodeReport
        do {
            report = try await MediaToolkit.join(
                parts: parts, starts: starts, audio: audio, to: output, faststart: faststart, indexSpace: indexSpace,
                gate: gate, logger: context.logger)
        } catch var error as MediaError where error.shimCode == MS_ERROR_EVERY_PART_EMPTY.rawValue {
            // Every range was empty: the source, not a part, is what could not be decoded (as a whole transcode says).
            error.message = "'\(input)': no video frame could be decoded"
            error.shimCode = MS_ERROR_NO_FRAMES.rawValue
            throw error
        }
        if report.partsLeftOut > 0 {
            context.logger.warning(
                "\(report.partsLeftOut) segment(s) left out: nothing in their range could be decoded (a damaged or lost stretch of the source), so the video has a gap there"
            )
        }
        return report
    }
}
