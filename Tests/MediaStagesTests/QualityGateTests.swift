import Foundation
import StageKit
import TestSupport
import Testing

@testable import MediaStages

/// `ffmpeg.transcode` with `quality`: the report in the outputs, and `minQuality` as a gate.
@Suite struct QualityGateTests {
    let folder = temporaryFolder()

    private func harness() -> StageHarness {
        StageHarness(stateFolder: folder.appendingPathComponent("state"))
    }

    /// One second of noise (hard to encode: a high CRF leaves visibly poor pictures), lossless 8-bit 4:2:0.
    private func noiseSource() async throws -> URL {
        let source = folder.appendingPathComponent("noise.mp4")
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                "nullsrc=size=320x180:rate=24:duration=1,geq=lum='random(1)*255':cb=128:cr=128", "-c:v", "libx264",
                "-qp", "0", "-pix_fmt", "yuv420p", source.path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        return source
    }

    @Test func theOutputsCarryTheReportOfTheFinishedFile() async throws {
        let source = try await noiseSource()
        let output = folder.appendingPathComponent("out/passed.mp4")
        let run = await harness().run(
            TranscodeStage.self,
            options: [
                "file": .string(source.path), "output": .string(output.path),
                "video": ["preset": "ultrafast", "crf": 18], "quality": ["metric": "vmaf", "minQuality": 20],
            ])
        let outputs = try run.outputs.get()
        let quality = try #require(outputs["quality"])
        #expect(quality["metric"] == "vmaf" && quality["model"] == "vmaf_v0.6.1")
        #expect(quality["frames"]?.intValue == outputs["frames"]?.intValue)
        // The report is the measurement of the file that landed.
        let measured = try await MediaToolkit.measureQuality(
            reference: source.path, distorted: output.path, metric: .vmaf)
        #expect(quality["mean"]?.doubleValue == measured.mean)
        #expect(quality["low1"]?.doubleValue == measured.low1)
        #expect(quality["worst"]?.doubleValue == measured.worst)
        #expect(measured.mean > 20)
    }

    @Test func anExportBelowMinQualityFailsWithoutRetryAndDoesNotLand() async throws {
        let source = try await noiseSource()
        let output = folder.appendingPathComponent("out/failed.mp4")
        let run = await harness().run(
            TranscodeStage.self,
            options: [
                "file": .string(source.path), "output": .string(output.path),
                "video": ["preset": "ultrafast", "crf": 51], "quality": ["metric": "vmaf", "minQuality": 90],
            ])
        guard case .failure(let failure as StageFailure) = run.outputs else {
            Issue.record("expected the gate to fail the stage, got \(run.outputs)")
            return
        }
        #expect(failure.kind == .qualityBelowMinimum)
        #expect(failure.disposition == .fatal)
        #expect(failure.message.contains("quality gate: VMAF mean "), "\(failure.message)")
        #expect(failure.message.contains("is below minQuality 90.00"), "\(failure.message)")
        #expect(failure.message.contains("model vmaf_v0.6.1"), "\(failure.message)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test func poolLow1PutsTheBoundOnTheOnePercentLow() async throws {
        let source = try await noiseSource()
        let run = await harness().run(
            TranscodeStage.self,
            options: [
                "file": .string(source.path), "output": .string(folder.appendingPathComponent("low.mp4").path),
                "video": ["preset": "ultrafast", "crf": 40],
                "quality": ["metric": "psnr", "pool": "low1", "minQuality": 99],
            ])
        guard case .failure(let failure as StageFailure) = run.outputs else {
            Issue.record("expected the gate to fail the stage, got \(run.outputs)")
            return
        }
        #expect(failure.message.contains("quality gate: PSNR 1 % low "), "\(failure.message)")
        #expect(failure.message.contains("is below minQuality 99.00"), "\(failure.message)")
    }

    @Test func aSegmentedExportIsMeasuredOnceJoined() async throws {
        let source = try await noiseSource()
        let output = folder.appendingPathComponent("out/segmented.mp4")
        let run = await harness().run(
            TranscodeStage.self,
            options: [
                "file": .string(source.path), "output": .string(output.path), "segmentSeconds": 0.5,
                "video": ["preset": "ultrafast", "crf": 30], "quality": ["metric": "ssim"],
            ])
        let outputs = try run.outputs.get()
        #expect(outputs["quality"]?["frames"]?.intValue == 24)
        let measured = try await MediaToolkit.measureQuality(
            reference: source.path, distorted: output.path, metric: .ssim)
        #expect(outputs["quality"]?["mean"]?.doubleValue == measured.mean)
        #expect(outputs["quality"]?["model"] == nil)
    }

    @Test func aMinQualityOutsideTheMetricsRangeIsAnOptionProblem() {
        func problems(_ quality: JSONValue) -> [String] {
            TranscodeStage.Options.problems(in: ["quality": quality]).map { "\($0.path): \($0.message)" }
        }
        #expect(
            problems(["metric": "ssim", "minQuality": 95]) == [
                "quality.minQuality: expected a score from 0 to 1.0000 for ssim, found 95.0: SSIM scores from 0 to 1.0000"
            ])
        #expect(problems(["minQuality": 101]).first?.contains("from 0 to 100.00 for vmaf, found 101.0") == true)
        #expect(
            problems(["metric": "psnr", "minQuality": 0]).first?.contains(
                "above 0 and at most 100.00 dB for psnr, found 0.0") == true)
        #expect(problems(["metric": "psnr", "minQuality": 120]).count == 1)
        for fine: JSONValue in [
            ["metric": "ssim", "minQuality": 0.95], ["minQuality": 100], ["metric": "psnr", "minQuality": 40],
            ["metric": "vmaf", "pool": "low1", "minQuality": 0],
        ] {
            #expect(problems(fine).isEmpty, "\(fine)")
        }
    }

    @Test func theGateNeverPrintsTwoEqualFigures() throws {
        var options = TranscodeStage.Options.Quality()
        options.minQuality = 90
        let gate = try #require(QualityGate(options))
        let report = QualityReport(metric: .vmaf, scores: [89.996, 89.996])
        let failure = try #require(gate.failure(of: report))
        #expect(failure.message.contains("VMAF mean 89.996 is below minQuality 90.000"), "\(failure.message)")
        #expect(gate.failure(of: QualityReport(metric: .vmaf, scores: [90])) == nil)
    }

    @Test func aGatedExportDoesNotStream() {
        let refusal = TranscodeStage.streamRefusal(
            with: ["segmentSeconds": "60s", "quality": ["minQuality": 90]], inputs: InputSummary(isInputFile: true))
        #expect(refusal?.contains("quality sets a bound") == true)
        #expect(
            TranscodeStage.streamRefusal(with: ["quality": ["metric": "ssim"]], inputs: InputSummary(isInputFile: true))
                == nil)
    }
}
