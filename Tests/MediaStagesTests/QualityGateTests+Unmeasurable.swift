import Foundation
import MediaStages
import StageKit
import TestSupport
import Testing

/// Exports whose quality cannot be measured: a gate refuses them before encoding; a report alone never costs the
/// export.
extension QualityGateTests {
    /// A lossless clip of `filter` made by the ffmpeg CLI with `arguments` (codec, pixel format).
    private func clip(_ name: String, _ filter: String, _ arguments: [String]) async throws -> URL {
        let clip = folder.appendingPathComponent(name)
        let made = await runTool(
            "/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", filter] + arguments + [clip.path])
        try #require(made.status == 0, "\(made.stderr)")
        return clip
    }

    private func sixtyFPS() async throws -> URL {
        try await clip(
            "sixty.mp4", "testsrc2=size=320x180:rate=60:duration=1",
            ["-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p"])
    }

    @Test func aGateOnAnExportOfAnotherFrameRateFailsBeforeEncoding() async throws {
        let output = folder.appendingPathComponent("out/capped.mp4")
        let run = await StageHarness(stateFolder: folder.appendingPathComponent("state")).run(
            TranscodeStage.self,
            options: [
                "file": .string(try await sixtyFPS().path), "output": .string(output.path),
                "video": ["preset": "ultrafast", "fps": 30], "quality": ["minQuality": 50],
            ])
        guard case .failure(let failure as StageFailure) = run.outputs else {
            Issue.record("expected the gate to refuse the export, got \(run.outputs)")
            return
        }
        #expect(failure.kind == .qualityNotMeasurable && failure.disposition == .fatal)
        #expect(failure.message.contains("capped at 30.0 fps, under the source's 60"), "\(failure.message)")
        #expect(run.progress.isEmpty, "refused before encoding: \(run.progress)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test(arguments: ["fps", "ten-bit", "format-switch"])
    func aReportAloneNeverCostsTheExport(_ case: String) async throws {
        let source: URL
        var video: JSONValue = ["preset": "ultrafast"]
        let reason: String
        switch `case` {
        case "fps":
            source = try await sixtyFPS()
            video = ["preset": "ultrafast", "fps": 30]
            reason = "capped at 30.0 fps"
        case "ten-bit":
            source = try await clip(
                "ten-bit.mkv", "testsrc2=size=160x96:rate=24:duration=0.5", ["-c:v", "ffv1", "-pix_fmt", "yuv420p10le"])
            reason = "yuv420p10le (10-bit 4:2:0)"
        default:  // found only while measuring: the probe sees yuvj420p, frame 10 on is yuvj444p
            var parts = Data()
            for format in ["yuvj420p", "yuvj444p"] {
                let part = try await clip(
                    "\(format).mjpeg", "testsrc2=size=160x96:rate=25:duration=0.4",
                    ["-c:v", "mjpeg", "-pix_fmt", format, "-f", "mjpeg"])
                parts.append(try Data(contentsOf: part))
            }
            let joined = folder.appendingPathComponent("switching.mjpeg")
            try parts.write(to: joined)
            source = folder.appendingPathComponent("switching.avi")  // a raw .mjpeg probes as a still picture
            let wrapped = await runTool(
                "/usr/bin/ffmpeg",
                ["-nostdin", "-v", "error", "-y", "-framerate", "25", "-i", joined.path, "-c", "copy", source.path])
            try #require(wrapped.status == 0, "\(wrapped.stderr)")
            reason = "yuvj444p at frame 10"
        }
        let output = folder.appendingPathComponent("out/\(`case`).mp4")
        let run = await StageHarness(stateFolder: folder.appendingPathComponent("state")).run(
            TranscodeStage.self,
            options: [
                "file": .string(source.path), "output": .string(output.path), "video": video,
                "quality": ["metric": "vmaf"],
            ])
        let outputs = try run.outputs.get()
        #expect(FileManager.default.fileExists(atPath: output.path))
        #expect(outputs["quality"] == nil)
        #expect(outputs["qualityNotMeasured"]?.stringValue?.contains(reason) == true, "\(outputs)")
    }
}
