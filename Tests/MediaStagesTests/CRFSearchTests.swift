import Foundation
import Logging
import StageKit
import TestSupport
import Testing

@testable import MediaStages

/// The CRF search's rules without encoding (the next probe, the samples) and with it (a budget that wins over the
/// target); the options it refuses.
@Suite struct CRFSearchTests {
    let folder = temporaryFolder()

    /// Runs the steps against `score` (by default one that falls by 1.5 per CRF from 100 at CRF 10) to the end; the answer and the CRFs probed, in order.
    private func search(
        bounds: ClosedRange<Int>, start: Int, threshold: Double,
        score: (Int) -> Double = { 100 - 1.5 * Double($0 - 10) }
    ) -> (Int?, [Int]) {
        var known: [Int: Double] = [:]
        var probed: [Int] = []
        for _ in 0..<QualityTarget.probeLimit {
            switch QualityTarget.step(known: known, threshold: threshold, in: bounds, start: start) {
            case .done(let crf): return (crf, probed)
            case .probe(let crf):
                #expect(known[crf] == nil, "CRF \(crf) probed twice")
                known[crf] = score(crf)
                probed.append(crf)
            }
        }
        Issue.record("no answer after \(QualityTarget.probeLimit) probes: \(probed)")
        return (nil, probed)
    }

    @Test func theStepsFindTheHighestCRFThatMeetsTheTargetInAFewProbes() {
        // 93 is met up to CRF 14 (94), not at 15 (92.5).
        let (crf, probed) = search(bounds: 10...40, start: 23, threshold: 93)
        #expect(crf == 14)
        #expect(probed.count <= 5, "\(probed)")
        #expect(probed.first == 23)
        // Met everywhere: the highest bound; nowhere: none.
        #expect(search(bounds: 10...40, start: 23, threshold: 40).0 == 40)
        #expect(search(bounds: 12...40, start: 23, threshold: 99).0 == nil)
        // Bounds narrow the answer.
        #expect(search(bounds: 10...12, start: 23, threshold: 93).0 == 12)
    }

    @Test func aCurveThatBendsIsBisectedNotCrept() {
        // Nearly flat up to CRF 34, then a cliff: interpolation alone crept a CRF per probe from 25 and ran out of
        // probes at 31.
        let cliff = { (crf: Int) in crf < 35 ? 99 - 0.05 * Double(crf - 10) : 60 }
        let (crf, probed) = search(bounds: 10...40, start: 20, threshold: 95, score: cliff)
        #expect(crf == 34)
        #expect(probed.count <= 7, "\(probed)")
    }

    @Test func aProbeThatBreaksTheOrderIsIgnored() {
        // CRF 20 passes although 18 failed (scores are not strictly monotonic): the answer stays below 18.
        let known: [Int: Double] = [16: 95, 18: 92, 20: 93.5]
        #expect(QualityTarget.step(known: known, threshold: 93, in: 10...40, start: 23) == .probe(17))
        #expect(
            QualityTarget.step(known: known.merging([17: 93.2]) { $1 }, threshold: 93, in: 10...40, start: 23)
                == .done(17))
    }

    /// A score that falls off a cliff between two whole CRFs (as the cellauto clip's does: 95.0 at 29.75, 93.0 at
    /// 30): the interpolated CRF misses, the middles of what is left are probed, and the highest CRF found to meet the
    /// target in four probes wins, not the whole CRF 2 points over.
    @Test func aCliffBetweenTwoWholeCRFsIsNarrowedDown() async throws {
        var options = TranscodeStage.Options.Quality()
        options.target = 93
        let target = try #require(QualityTarget(options, codec: .h264, duration: 10, bytesBesideVideo: 0))
        let score = { (crf: Double) in crf < 30.6 ? 95.04 - (crf - 30) * 0.5 : 92.9 - (crf - 30.6) * 0.3 }
        var probed: [Double] = []
        let choice = try await target.refine(CRFSearch.Choice(crf: 30, note: nil)) { crf in
            probed.append(crf)
            return CRFSearch.Probe(crf: crf, score: score(crf), size: 1000)
        }
        // 30.875 (interpolated) misses, then the middles 30.4375 (meets), 30.625 (misses), 30.5 (meets).
        #expect(probed == [30, 31, 30.875, 30.4375, 30.625, 30.5], "\(choice)")
        #expect(choice.crf == 30.5)
        #expect(choice.note?.contains("falls from 94.79 at CRF 30.5 to 92.89 at CRF 30.625") == true, "\(choice)")
    }

    /// A CRF that already scores within half a point of the target is not refined.
    @Test func aCRFCloseToTheTargetIsKept() async throws {
        var options = TranscodeStage.Options.Quality()
        options.target = 93
        let target = try #require(QualityTarget(options, codec: .h264, duration: 10, bytesBesideVideo: 0))
        var probed: [Double] = []
        let choice = try await target.refine(CRFSearch.Choice(crf: 24, note: nil)) { crf in
            probed.append(crf)
            return CRFSearch.Probe(crf: crf, score: crf == 24 ? 93.3 : 91.0, size: 1000)
        }
        #expect(choice.crf == 24 && probed == [24, 25])
    }

    @Test func shortSourcesAreTheirOwnSampleLongOnesAreSampledEvenly() {
        let whole = TranscodeSettings.TimeRange(start: 0, end: nil)
        #expect(CRFSearch.samples(of: whole, duration: 30) == [CRFSearch.Sample(encoded: whole, scored: whole)])
        let samples = CRFSearch.samples(of: whole, duration: 600)
        #expect(samples.count == 5)
        for sample in samples {
            #expect((sample.scored.end ?? 0) - sample.scored.start == CRFSearch.sampleSeconds)
            #expect(sample.encoded.start == sample.scored.start - CRFSearch.warmUp)
            #expect(sample.encoded.end == (sample.scored.end ?? 0) + CRFSearch.coolDown)
        }
        #expect(samples.first!.encoded.start > 0 && samples.last!.encoded.end! < 600)
        // A segment's range is sampled within it, margins included.
        let segment = TranscodeSettings.TimeRange(start: 600, end: 640)
        let within = CRFSearch.samples(of: segment, duration: 40)
        #expect(within.count == 3 && within.allSatisfy { $0.encoded.start >= 600 && $0.encoded.end! <= 640 })
    }

    @Test func aSamplesMarginsAreLeftOutOfItsScores() {
        let sample = CRFSearch.Sample(
            encoded: TranscodeSettings.TimeRange(start: 9, end: 15),
            scored: TranscodeSettings.TimeRange(start: 10, end: 14))
        let frames = (0..<72).map(Double.init)  // 12 fps
        #expect(Array(sample.scoredPart(of: frames)) == (12..<60).map(Double.init))
        // Clipped at the source's start: no warm-up to leave out.
        let first = CRFSearch.Sample(
            encoded: TranscodeSettings.TimeRange(start: 0, end: 5),
            scored: TranscodeSettings.TimeRange(start: 0, end: 4))
        #expect(Array(first.scoredPart(of: (0..<60).map(Double.init))) == (0..<48).map(Double.init))
    }

    private func problems(_ with: JSONValue) -> [String] {
        TranscodeStage.Options.problems(in: with).map { "\($0.path): \($0.message)" }
    }

    @Test func theOptionsItRefuse() {
        #expect(
            problems(["video": ["crf": 23], "quality": ["target": 93]]) == [
                "video.crf: quality.target searches the CRF, so video.crf cannot be given too: leave out one of them"
            ])
        #expect(
            problems(["quality": ["target": 101]]) == [
                "quality.target: expected a score of at most 100.00 for vmaf, found 101.0"
            ])
        #expect(problems(["quality": ["metric": "ssim", "target": 0.98]]).isEmpty)
        #expect(
            problems(["quality": ["metric": "ssim", "target": 2]]) == [
                "quality.target: expected a score of at most 1.0000 for ssim, found 2.0"
            ])
        #expect(
            problems(["quality": ["maxSize": "5MB"]]) == [
                "quality.maxSize: maxSize bounds the CRF search of quality.target: give a target, or leave it out"
            ])
        #expect(
            problems(["quality": ["target": 93, "minCRF": 30, "maxCRF": 20]]) == [
                "quality.minCRF: minCRF 30 is above maxCRF 20: no CRF is left to search"
            ])
        #expect(
            problems(["quality": ["target": 93, "maxCRF": 60]]) == [
                "quality.maxCRF: expected a CRF from 0 to 51 for h264, found 60"
            ])
        #expect(problems(["video": ["codec": "av1"], "quality": ["target": 93, "maxCRF": 60]]).isEmpty)
        // A profile's CRF is what the search replaces: no conflict.
        #expect(problems(["profile": "web-720p", "quality": ["target": 93]]).isEmpty)
    }

    /// Two seconds of a moving pattern with light noise: a few hundred kB at the target.
    private func source() async throws -> URL {
        let file = folder.appendingPathComponent("source.mp4")
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                "testsrc2=size=320x180:rate=24:duration=2,noise=alls=12:allf=t", "-c:v", "libx264", "-qp", "0",
                "-pix_fmt", "yuv420p", file.path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        return file
    }

    private func export(_ source: URL, name: String, quality: JSONValue) async throws -> JSONValue {
        let run = await StageHarness(stateFolder: folder.appendingPathComponent("state-\(name)")).run(
            TranscodeStage.self,
            options: [
                "file": .string(source.path), "output": .string(folder.appendingPathComponent("\(name).mp4").path),
                "video": ["preset": "veryfast"], "quality": quality,
            ])
        return try run.outputs.get()
    }

    @Test func aBudgetWinsOverTheTargetAndSaysSo() async throws {
        let source = try await source()
        let free = try await export(source, name: "free", quality: ["target": 93])
        let freeCRF = try #require(free["crfSearch"]?["crf"]?.doubleValue)
        #expect(free["crfSearch"]?["note"] == nil)
        let freeSize = try #require(free["size"]?.intValue)
        let budget = freeSize / 2
        let held = try await export(source, name: "held", quality: ["target": 93, "maxSize": .int(budget)])
        let search = try #require(held["crfSearch"])
        let crf = try #require(search["crf"]?.intValue)
        let note = search["note"]?.stringValue ?? ""
        #expect(Double(crf) > freeCRF, "\(crf) vs \(freeCRF)")
        // The note names the whole CRF that meets the target, before its refinement in quarter steps.
        let needed = Int(freeCRF.rounded(.down))
        #expect(note.contains("the budget wins over the target: VMAF 93.00 (mean) needs CRF \(needed)"), "\(note)")
        #expect(note.contains("over maxSize"), "\(note)")
        // The source is its own sample: the estimate is the encode's size, and the export keeps within it.
        let size = try #require(held["size"]?.intValue)
        #expect(Double(size) <= Double(budget) * 1.02, "\(size) bytes for a budget of \(budget)")
        // The report is the real score, below the target that the budget overrode.
        #expect((held["quality"]?["mean"]?.doubleValue ?? 100) < 93)
        // The CRF one below the choice is over the budget.
        let probes = search["probes"]?.arrayValue ?? []
        let below = probes.first { $0["crf"]?.intValue == crf - 1 }
        #expect((below?["size"]?.intValue ?? 0) > budget, "\(probes)")
    }

    /// Encodes a second of `pattern` at 160x90 losslessly into `name`.
    private func clip(_ pattern: String, name: String) async throws -> URL {
        let file = folder.appendingPathComponent(name)
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "\(pattern)=size=160x90:rate=12:duration=1",
                "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", file.path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        return file
    }

    /// A search of all of `source` (`duration` seconds) for PSNR 40 dB with ultrafast probes, its samples in `folder`.
    private func psnrSearch(of source: URL, duration: Double, folder: URL) throws -> CRFSearch {
        var options = TranscodeStage.Options.Quality()
        options.metric = .psnr
        options.target = 40
        let target = try #require(QualityTarget(options, codec: .h264, duration: duration, bytesBesideVideo: 0))
        var settings = TranscodeSettings()
        settings.preset = .ultrafast
        return CRFSearch(
            input: source.path, settings: settings, range: TranscodeSettings.TimeRange(start: 0, end: nil),
            duration: duration, target: target, folder: folder, logger: Logger(label: "test"))
    }

    @Test func aSearchWithoutProbesDoesNotScoreAgainstAnEarlierSearchsReferences() async throws {
        let source = try await clip("testsrc2", name: "now.mp4")
        let scratch = folder.appendingPathComponent("crf-search")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        // What a killed search of another input left: a reference with as many frames, of other pictures.
        let stale = try await clip("smptebars", name: "before.mp4")
        try FileManager.default.copyItem(at: stale, to: scratch.appendingPathComponent("source-0.mp4"))
        let search = try psnrSearch(of: source, duration: 1, folder: scratch)
        let (choice, probes) = try await search.run(known: []) { _ in }
        // Against the stale reference no CRF reaches 40 dB: the lowest bound would be chosen, with a note.
        #expect(choice.note == nil, "\(choice) \(probes)")
        #expect((probes.first { $0.crf == choice.crf }?.score ?? 0) >= 40, "\(probes)")
    }

    @Test func aSampleWithoutFramesIsLeftOut() async throws {
        // 40 s with no frame from 12 s to 25 s: the middle sample (17-23 s with its margins) has none.
        let source = folder.appendingPathComponent("gap.mp4")
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=12:duration=40",
                "-vf", "select='not(between(t,12,25))'", "-fps_mode", "passthrough", "-c:v", "libx264", "-qp", "0",
                "-pix_fmt", "yuv420p", source.path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        #expect(CRFSearch.samples(of: TranscodeSettings.TimeRange(start: 0, end: nil), duration: 40).count == 3)
        let search = try psnrSearch(of: source, duration: 40, folder: folder.appendingPathComponent("crf-search"))
        let (choice, probes) = try await search.run(known: []) { _ in }
        #expect(choice.note == nil, "\(choice) \(probes)")
        #expect((probes.first { $0.crf == choice.crf }?.score ?? 0) >= 40, "\(probes)")
    }
}
