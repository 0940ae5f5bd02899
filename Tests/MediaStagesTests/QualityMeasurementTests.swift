import Foundation
import MediaStages
import NIOConcurrencyHelpers
import StageKit
import TestSupport
import Testing

/// The quality measurement against independent tools: VMAF against the libvmaf in imageio-ffmpeg's static FFmpeg (a
/// build of its own, pip package imageio-ffmpeg), SSIM and PSNR against the Debian ffmpeg CLI's filters.
@Suite struct QualityMeasurementTests {
    let folder = temporaryFolder()

    /// Tiny synthetic sources of different character: test pattern, fractal zoom, noise (hard to encode).
    static let sources = [
        "testsrc2=size=320x180:rate=24:duration=1",
        "mandelbrot=size=320x180:rate=24,trim=duration=1",
        "nullsrc=size=320x180:rate=24:duration=1,geq=lum='random(1)*255':cb=128:cr=128",
    ]

    /// A lossless 8-bit 4:2:0 reference of `source` and its encodes at CRF 23 and 40.
    private func clips(_ source: String, name: String) async throws -> (reference: URL, encodes: [URL]) {
        let reference = folder.appendingPathComponent("\(name)-reference.mp4")
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", source, "-c:v", "libx264", "-qp", "0",
                "-pix_fmt", "yuv420p", reference.path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        var encodes: [URL] = []
        for crf in [23, 40] {
            let encode = folder.appendingPathComponent("\(name)-crf\(crf).mp4")
            let encoded = await runTool(
                "/usr/bin/ffmpeg",
                [
                    "-nostdin", "-v", "error", "-y", "-i", reference.path, "-c:v", "libx264", "-preset", "ultrafast",
                    "-crf", "\(crf)", encode.path,
                ])
            try #require(encoded.status == 0, "\(encoded.stderr)")
            encodes.append(encode)
        }
        return (reference, encodes)
    }

    /// `tool -i distorted -i reference -lavfi <filter>` with its log written to `log`; the log's text.
    private func filterLog(_ tool: String, _ filter: String, distorted: URL, reference: URL, log: URL) async throws
        -> String
    {
        let ran = await runTool(
            tool,
            [
                "-nostdin", "-v", "error", "-i", distorted.path, "-i", reference.path, "-lavfi", filter, "-f", "null",
                "-",
            ])
        try #require(ran.status == 0, "\(ran.stderr)")
        return try String(contentsOf: log, encoding: .utf8)
    }

    /// The mean of the per-frame values `key:<value>` of a `ssim` or `psnr` stats file.
    private func statsMean(_ stats: String, key: String) -> Double {
        let values = stats.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("\(key):") }.flatMap { Double($0.dropFirst(key.count + 1)) }
        }
        return values.isEmpty ? .nan : values.reduce(0, +) / Double(values.count)
    }

    @Test(arguments: zip(QualityMeasurementTests.sources, ["testsrc2", "mandelbrot", "noise"]))
    func vmafMatchesAnIndependentLibvmaf(source: String, name: String) async throws {
        let ffmpeg = try await IndependentVMAF().ffmpeg
        let (reference, encodes) = try await clips(source, name: name)
        var means: [Double] = []
        for encode in encodes {
            let ours = try await MediaToolkit.measureQuality(
                reference: reference.path, distorted: encode.path, metric: .vmaf)
            let log = folder.appendingPathComponent("\(encode.lastPathComponent).vmaf.json")
            let text = try await filterLog(
                ffmpeg, "libvmaf=model=version=vmaf_v0.6.1:log_fmt=json:log_path=\(log.path)", distorted: encode,
                reference: reference, log: log)
            let json = try JSONValue(parsing: Data(text.utf8))
            let theirs = try #require(json["pooled_metrics"]?["vmaf"]?["mean"]?.doubleValue)
            #expect(ours.frames == json["frames"]?.arrayValue?.count)
            #expect(abs(ours.mean - theirs) <= 0.5, "\(encode.lastPathComponent): ours \(ours), libvmaf \(theirs)")
            #expect(ours.model == "vmaf_v0.6.1" && ours.metric == "vmaf")
            means.append(ours.mean)
        }
        #expect(means[0] > means[1], "CRF 23 scores above CRF 40: \(means)")
    }

    @Test(arguments: zip(QualityMeasurementTests.sources, ["testsrc2", "mandelbrot", "noise"]))
    func ssimAndPSNRMatchFFmpegsFilters(source: String, name: String) async throws {
        let (reference, encodes) = try await clips(source, name: name)
        for encode in encodes {
            let ssim = try await MediaToolkit.measureQuality(
                reference: reference.path, distorted: encode.path, metric: .ssim)
            let psnr = try await MediaToolkit.measureQuality(
                reference: reference.path, distorted: encode.path, metric: .psnr)
            let ssimLog = folder.appendingPathComponent("\(encode.lastPathComponent).ssim.log")
            let psnrLog = folder.appendingPathComponent("\(encode.lastPathComponent).psnr.log")
            let ssimStats = try await filterLog(
                "/usr/bin/ffmpeg", "ssim=stats_file=\(ssimLog.path)", distorted: encode, reference: reference,
                log: ssimLog)
            let psnrStats = try await filterLog(
                "/usr/bin/ffmpeg", "psnr=stats_file=\(psnrLog.path)", distorted: encode, reference: reference,
                log: psnrLog)
            #expect(abs(ssim.mean - statsMean(ssimStats, key: "All")) <= 0.0005, "\(ssim)")
            #expect(abs(psnr.mean - statsMean(psnrStats, key: "psnr_avg")) <= 0.05, "\(psnr)")
            #expect(ssim.frames == 24 && psnr.frames == 24)
        }
    }

    @Test func aReferenceOtherThan8Bit420IsRefused() async throws {
        let reference = folder.appendingPathComponent("ten-bit.mkv")
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x96:rate=24:duration=0.25",
                "-c:v", "ffv1", "-pix_fmt", "yuv420p10le", reference.path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        let error = await #expect(throws: MediaError.self) {
            _ = try await MediaToolkit.measureQuality(
                reference: reference.path, distorted: reference.path, metric: .vmaf)
        }
        #expect(error?.code == .qualityUnsupported)
        #expect(error?.message.contains("yuv420p10le") == true, "\(String(describing: error))")
    }

    /// An MJPEG stream whose first 10 frames are yuvj420p and the next 10 yuvj444p (two streams joined), compared
    /// with itself: the 11th frame's format is refused, not scored as if it were 4:2:0.
    @Test(arguments: [QualityMetric.vmaf, .ssim])
    func aFormatChangeMidFileIsRefused(metric: QualityMetric) async throws {
        var parts = Data()
        for format in ["yuvj420p", "yuvj444p"] {
            let part = folder.appendingPathComponent("\(metric)-\(format).mjpeg")
            let made = await runTool(
                "/usr/bin/ffmpeg",
                [
                    "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25:duration=0.4",
                    "-c:v", "mjpeg", "-pix_fmt", format, "-f", "mjpeg", part.path,
                ])
            try #require(made.status == 0, "\(made.stderr)")
            parts.append(try Data(contentsOf: part))
        }
        let switching = folder.appendingPathComponent("\(metric)-switching.mjpeg")
        try parts.write(to: switching)
        let error = await #expect(throws: MediaError.self) {
            _ = try await MediaToolkit.measureQuality(
                reference: switching.path, distorted: switching.path, metric: metric)
        }
        #expect(error?.code == .qualityUnsupported)
        #expect(error?.message.contains("yuvj444p at frame 10") == true, "\(String(describing: error))")
    }

    @Test func filesOfDifferentLengthsAreNotCompared() async throws {
        let (reference, encodes) = try await clips(Self.sources[0], name: "length")
        let shorter = folder.appendingPathComponent("shorter.mp4")
        let cut = await runTool(
            "/usr/bin/ffmpeg",
            ["-nostdin", "-v", "error", "-y", "-i", encodes[0].path, "-frames:v", "20", "-c", "copy", shorter.path])
        try #require(cut.status == 0, "\(cut.stderr)")
        let error = await #expect(throws: MediaError.self) {
            _ = try await MediaToolkit.measureQuality(reference: reference.path, distorted: shorter.path, metric: .psnr)
        }
        #expect(error?.code == .qualityMismatch)
        #expect(error?.message.contains("ends after 20 frames") == true, "\(String(describing: error))")
    }

    @Test func cancellingAMeasurementStopsIt() async throws {
        let clip = folder.appendingPathComponent("long.mp4")
        // Small frames: what is proven is the stop, not the speed (a debug build's VMAF is slow over large ones).
        try await makeClip(seconds: 20, size: "320x180", at: clip)
        let reached = NIOLockedValueBox(0.0)
        let ended = NIOLockedValueBox(false)
        let task = Task {
            defer { ended.withLockedValue { $0 = true } }
            return try await MediaToolkit.measureQuality(
                reference: clip.path, distorted: clip.path, metric: .vmaf, threads: 1
            ) { done, _ in reached.withLockedValue { $0 = done } }
        }
        // Cancel once a seeded 1 to 5 seconds of the 20 are measured.
        let random = SeededRandom("cancellingAMeasurementStopsIt")
        let cancelAt = Double(random.int(in: 1...5))
        try await waitUntil("the measurement passed \(cancelAt) s") {
            reached.withLockedValue { $0 } >= cancelAt || ended.withLockedValue { $0 }
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(reached.withLockedValue { $0 } < 19, "it stopped before the end")
    }

    @Test func poolingTakesTheMeanOfTheWorstOnePercent() {
        // 250 frames: the worst ⌈250 / 100⌉ = 3 are 10, 20 and 30; the rest score 90.
        var scores = [Double](repeating: 90, count: 250)
        scores[7] = 30
        scores[100] = 10
        scores[249] = 20
        let report = QualityReport(metric: .vmaf, scores: scores)
        #expect(report.frames == 250)
        #expect(report.low1 == 20)
        #expect(report.worst == 10 && report.worstFrame == 100)
        #expect(abs(report.mean - (247 * 90 + 60) / 250.0) < 1e-9)
        // Under 100 frames the 1 % low is the worst frame.
        #expect(QualityReport(metric: .ssim, scores: [0.9, 0.8, 0.95]).low1 == 0.8)
    }
}
