import Foundation
import Logging
import StageKit
import Synchronization
import TestSupport
import Testing

@testable import MediaStages

/// Every transcode's default quality report: the encoder's own PSNR of each frame, checked against the Debian ffmpeg
/// CLI's `psnr` filter run on the finished export and its source (the CLI's `-psnr` prints nothing for libx264 in
/// FFmpeg 5.1: its libx264 hands the figures to no one but its log).
@Suite struct EncoderQualityTests {
    let folder = temporaryFolder()

    private func harness() -> StageHarness {
        StageHarness(stateFolder: folder.appendingPathComponent("state"))
    }

    /// A lossless 8-bit 4:2:0 source of the lavfi graph `graph`, a keyframe every second (segments start there).
    private func source(_ graph: String, name: String) async throws -> URL {
        let source = folder.appendingPathComponent("\(name).mp4")
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", graph, "-c:v", "libx264", "-qp", "0", "-g", "24",
                "-pix_fmt", "yuv420p", source.path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        return source
    }

    /// The per-frame `psnr_avg` of the ffmpeg CLI's `psnr` filter, `export` against `source`, in display order.
    private func peerPSNR(export: URL, source: URL) async throws -> [Double] {
        let log = folder.appendingPathComponent("\(export.lastPathComponent).psnr.log")
        let ran = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-i", export.path, "-i", source.path, "-lavfi",
                "psnr=stats_file=\(log.path)", "-f", "null", "-",
            ])
        try #require(ran.status == 0, "\(ran.stderr)")
        return try String(contentsOf: log, encoding: .utf8).split(separator: "\n").compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("psnr_avg:") }.map { value in
                Double(value.dropFirst("psnr_avg:".count)) ?? 100  // "inf": an identical frame
            }
        }
    }

    /// The report in the outputs, decoded.
    private func report(_ outputs: JSONValue) throws -> QualityReport {
        let quality = try #require(outputs["quality"], "no quality in \(outputs)")
        return try JSONDecoder().decode(QualityReport.self, from: quality.serializedData())
    }

    @Test func aTranscodeReportsTheEncodersPSNRAsThePeerMeasuresIt() async throws {
        let source = try await source("testsrc2=size=320x180:rate=24:duration=2", name: "pattern")
        let output = folder.appendingPathComponent("out/pattern.mp4")
        let run = await harness().run(
            TranscodeStage.self,
            options: [
                "file": .string(source.path), "output": .string(output.path),
                "video": ["preset": "veryfast", "crf": 30],
            ])
        let outputs = try run.outputs.get()
        let report = try report(outputs)
        #expect(report.metric == "psnr" && report.source == .encoder && report.worstSegment == nil)
        let peer = QualityReport(metric: .psnr, scores: try await peerPSNR(export: output, source: source))
        #expect(report.frames == peer.frames && report.frames == outputs["frames"]?.intValue)
        #expect(abs(report.mean - peer.mean) < 0.05, "\(report) against the psnr filter's \(peer)")
        #expect(abs(report.low1 - peer.low1) < 0.05, "\(report) against the psnr filter's \(peer)")
        #expect(abs(report.worst - peer.worst) < 0.05, "\(report) against the psnr filter's \(peer)")
        #expect(outputs["qualityNotMeasured"] == nil)
    }

    /// Two transcodes at once in one process, a clean and a noisy clip of 240 frames (so the 1 % low pools 3 frames,
    /// not just the worst): each one's PSNR of every frame, in display order, is its own peer's within 0.2 dB (libx264's
    /// figure for testsrc2's B-frames was up to 0.14 dB from the psnr filter's; a frame of the other clip is 15 dB off).
    @Test func concurrentTranscodesEachReportTheirOwnFramesInDisplayOrder() async throws {
        let clean = try await source("testsrc2=size=320x180:rate=24:duration=10", name: "clean")
        let noisy = try await source(
            "nullsrc=size=320x180:rate=24:duration=10,geq=lum='128+(random(1)-0.5)*60*(1+T)':cb=128:cr=128",
            name: "noisy")
        func encode(_ source: URL) async throws -> (URL, TranscodeReport) {
            let export = folder.appendingPathComponent("\(source.deletingPathExtension().lastPathComponent)-export.mp4")
            var settings = TranscodeSettings()
            settings.threads = 1
            let report = try await MediaToolkit.transcode(
                source.path, to: export.path, settings: settings, encoderPSNR: true, logger: Logger(label: "test"))
            return (export, report)
        }
        async let first = encode(clean)
        async let second = encode(noisy)
        for (source, (export, report)) in [(clean, try await first), (noisy, try await second)] {
            let peer = try await peerPSNR(export: export, source: source)
            let frames = try #require(report.encoderPSNR)
            try #require(frames.count == 240 && peer.count == 240, "\(frames.count) and \(peer.count) frames")
            for (index, (ours, theirs)) in zip(frames, peer).enumerated() {
                #expect(
                    abs(ours - theirs) < 0.2, "\(source.lastPathComponent) frame \(index): \(ours) dB, peer \(theirs)")
            }
            let pooled = try #require(report.encoderQuality)
            let expected = QualityReport(metric: .psnr, scores: peer)
            #expect(pooled.worstFrame == expected.worstFrame && abs(pooled.low1 - expected.low1) < 0.2, "\(pooled)")
        }
        let noisyReport = QualityReport(metric: .psnr, scores: try await second.1.encoderPSNR ?? [])
        #expect(noisyReport.low1 > noisyReport.worst + 0.01, "\(noisyReport): the 1 % low is the worst frame alone")
    }

    @Test func libx264sAdviceToTuneForPSNRIsNotLogged() async throws {
        // Asked for its PSNR, libx264 warns that psy optimisation spoils it: advice for benchmarks, not for exports.
        let source = try await source("testsrc2=size=320x180:rate=24:duration=1", name: "advice")
        let lines = LineCollector(level: .info)
        let report = try await MediaToolkit.transcode(
            source.path, to: folder.appendingPathComponent("advice-export.mp4").path, settings: TranscodeSettings(),
            encoderPSNR: true, logger: Logger(label: "test") { _ in lines })
        #expect(report.encoderPSNR?.count == 24)
        let warnings = lines.lines.withLock { $0 }
        #expect(!warnings.contains { $0.contains("psy on") || $0.contains("benchmark psnr") }, "\(warnings)")
    }

    @Test func qualityReportFalseLeavesTheReportOut() async throws {
        let source = try await source("testsrc2=size=320x180:rate=24:duration=1", name: "plain")
        let run = await harness().run(
            TranscodeStage.self,
            options: [
                "file": .string(source.path), "output": .string(folder.appendingPathComponent("plain.mp4").path),
                "video": ["preset": "ultrafast"], "qualityReport": false,
            ])
        let outputs = try run.outputs.get()
        #expect(outputs["frames"]?.intValue == 24)
        #expect(outputs["quality"] == nil && outputs["qualityNotMeasured"] == nil, "\(outputs)")
    }

    @Test func qualityReportFalseWithAMeasurementIsRefused() {
        let problems = TranscodeStage.Options.problems(in: [
            "qualityReport": false, "quality": ["metric": "psnr"],
        ])
        #expect(problems.map(\.message).contains { $0.contains("qualityReport false turns") }, "\(problems)")
        #expect(TranscodeStage.Options.problems(in: ["qualityReport": false]).isEmpty)
    }

    @Test func anEncoderThatKeepsItsPSNRIsNamed() async throws {
        let source = try await source("testsrc2=size=320x180:rate=24:duration=1", name: "hevc")
        let run = await harness().run(
            TranscodeStage.self,
            options: [
                "file": .string(source.path), "output": .string(folder.appendingPathComponent("hevc.mp4").path),
                "video": ["codec": "hevc", "preset": "ultrafast"],
            ])
        let outputs = try run.outputs.get()
        #expect(outputs["quality"] == nil)
        #expect(outputs["qualityNotMeasured"] == "not reported by libx265")
    }

    @Test func aSegmentedEncodePoolsEveryFrameAsThePeerMeasuresTheWhole() async throws {
        // Noise that grows each second: the last of the four one-second segments is the worst.
        let source = try await source(
            "nullsrc=size=320x180:rate=24:duration=4,geq=lum='128+(random(1)-0.5)*40*(1+floor(T))':cb=128:cr=128",
            name: "growing")
        let output = folder.appendingPathComponent("out/growing.mp4")
        let run = await harness().run(
            TranscodeStage.self,
            options: [
                "file": .string(source.path), "output": .string(output.path), "segmentSeconds": 1,
                "video": ["preset": "veryfast", "crf": 28],
            ])
        let outputs = try run.outputs.get()
        let report = try report(outputs)
        let frames = try await peerPSNR(export: output, source: source)
        let peer = QualityReport(metric: .psnr, scores: frames)
        #expect(report.frames == 96 && peer.frames == 96)
        #expect(abs(report.mean - peer.mean) < 0.05, "\(report) against the psnr filter's \(peer)")
        #expect(abs(report.low1 - peer.low1) < 0.05, "\(report) against the psnr filter's \(peer)")
        #expect(abs(report.worst - peer.worst) < 0.05, "\(report) against the psnr filter's \(peer)")
        // The last segment (the noisiest second, with the one before it when the plan folds a short tail in).
        let worst = try #require(report.worstSegment)
        let first = Int((worst.start * 24).rounded())
        #expect(worst.index > 0 && first + worst.frames == 96, "\(worst)")
        let span = frames[first...]
        let peerMean = span.reduce(0, +) / Double(span.count)
        #expect(abs(worst.mean - peerMean) < 0.05, "\(worst) against the psnr filter's \(peerMean)")
    }
}
