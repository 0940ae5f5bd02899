import Foundation
import StageKit
import TestSupport
import Testing

@testable import MediaStages

/// `quality.target` on a corpus of very different clips: every export, measured by an independent libvmaf
/// (imageio-ffmpeg's static FFmpeg), lands within ±1 of the target (CRFs in sixteenths; a cliff in the score is
/// named), and simple clips get a higher CRF than complex ones. The clips are tiny (320x180, 12 fps, 2 s) so that the whole corpus is searched in seconds:
/// a source this short is its own sample. The sampling of long sources is CRFSearchSampledTests'.
@Suite struct CRFSearchCorpusTests {
    let folder = temporaryFolder()

    /// lavfi sources (the zone plate through the independent FFmpeg: Debian's 5.1 has no zoneplate source).
    static let corpus: [(name: String, source: String)] = [
        ("still", "smptebars=size=320x180:rate=12:duration=2"),
        ("testsrc2", "testsrc2=size=320x180:rate=12:duration=2"),
        ("mandelbrot", "mandelbrot=size=320x180:rate=12,trim=duration=2"),
        ("life", "life=size=320x180:rate=12:mold=10:ratio=0.5:seed=7,trim=duration=2"),
        ("cellauto", "cellauto=size=320x180:rate=12:rule=110:seed=7,trim=duration=2"),
        ("zoneplate", "zoneplate=size=320x180:rate=12:kt2=30:kx2=200:ky2=200,trim=duration=2"),
        ("noise-light", "testsrc2=size=320x180:rate=12:duration=2,noise=alls=8:allf=t"),
        ("noise-strong", "testsrc2=size=320x180:rate=12:duration=2,noise=alls=40:allf=t"),
    ]

    /// A lossless 8-bit 4:2:0 clip of the lavfi `source`.
    private func clip(_ name: String, _ source: String, vmaf: IndependentVMAF) async throws -> URL {
        let file = folder.appendingPathComponent("\(name).mp4")
        let tool = name == "zoneplate" ? vmaf.ffmpeg : "/usr/bin/ffmpeg"
        let made = await runTool(
            tool,
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", source, "-c:v", "libx264", "-qp", "0",
                "-pix_fmt", "yuv420p", file.path,
            ])
        try #require(made.status == 0, "\(name): \(made.stderr)")
        return file
    }

    /// Exports `source` with a target of VMAF 93; its CRF and the independent score.
    private func export(_ source: URL, pool: QualityPool, vmaf: IndependentVMAF) async throws -> (
        crf: Double, score: Double
    ) {
        let output = folder.appendingPathComponent(
            "out/\(source.deletingPathExtension().lastPathComponent)-\(pool.rawValue).mp4")
        let run = await StageHarness(stateFolder: folder.appendingPathComponent("state")).run(
            TranscodeStage.self,
            options: [
                "file": .string(source.path), "output": .string(output.path), "video": ["preset": "veryfast"],
                "quality": ["metric": "vmaf", "target": 93, "pool": .string(pool.rawValue)],
            ])
        let outputs = try run.outputs.get()
        let search = try #require(outputs["crfSearch"])
        let crf = try #require(search["crf"]?.doubleValue)
        // The report is the measurement of the export that landed, at the chosen CRF.
        let ours = try #require(outputs["quality"]?[pool.rawValue]?.doubleValue)
        let theirs = try await vmaf.score(output, against: source, pool: pool)
        #expect(abs(ours - theirs) <= 0.5, "\(source.lastPathComponent): ours \(ours), libvmaf \(theirs)")
        let probes = search["probes"]?.arrayValue ?? []
        // At most the documented bound: probeLimit to bracket the target, then the next whole CRF and
        // refinementProbes to refine it (typically 3-7 in all; cellauto's cliff takes 12).
        let bound = QualityTarget.probeLimit + 1 + QualityTarget.refinementProbes
        #expect((1...bound).contains(probes.count), "\(source.lastPathComponent): \(probes.count) probes")
        // The CRF is the highest whole one that meets the target, refined in sixteenths: the next whole CRF, probed,
        // misses it.
        let scores = Dictionary(
            probes.compactMap { probe in probe["crf"]?.doubleValue.map { ($0, probe["score"]?.doubleValue ?? .nan) } },
            uniquingKeysWith: { first, _ in first })
        // A note names a cliff in the score (see below), or why no CRF within the bounds meets the target.
        let cliffNote = search["note"]?.stringValue.map { $0.contains("falls from") } ?? false
        let whole = crf.rounded(.down) + 1
        let next = scores[whole] ?? .nan
        if search["note"] == nil || cliffNote {
            #expect(next < 93, "\(source.lastPathComponent): CRF \(whole) scores \(next), probes \(scores)")
        }
        // The export lands within ±1 of the target as the independent libvmaf measures it, unless the score falls
        // off a cliff: a CRF probed within an eighth above the chosen one misses the target, and the note says so.
        if abs(theirs - 93) > 1 {
            let cliff = scores.contains { $0.key > crf && $0.key <= crf + 0.125 && $0.value < 93 }
            #expect(
                cliff && cliffNote,
                "\(source.lastPathComponent): CRF \(crf) scores \(theirs) by the independent libvmaf, probes \(scores)")
            print("\(source.lastPathComponent): \(search["note"]?.stringValue ?? "")")
        }
        print(
            "\(source.lastPathComponent) (\(pool.rawValue)): CRF \(crf), independent VMAF \(String(format: "%.2f", theirs)), CRF \(whole) scores \(String(format: "%.2f", next)), \(probes.count) probes"
        )
        return (crf, theirs)
    }

    /// Every clip at the mean, and "life" at the 1 % low too (its clip made once).
    @Test func everyExportLandsWithinOnePointOfTheTarget() async throws {
        let vmaf = try await IndependentVMAF()
        var chosen: [String: Double] = [:]
        var files: [String: URL] = [:]
        var sources = Self.corpus
        sources.append(("sample", ""))
        for (name, source) in sources {
            let file =
                source.isEmpty
                ? samples.appendingPathComponent("clip-h264-aac.mp4")
                : try await clip(name, source, vmaf: vmaf)
            files[name] = file
            chosen[name] = try await export(file, pool: .mean, vmaf: vmaf).crf
        }
        let simple = ["still", "testsrc2"].compactMap { chosen[$0] }
        let complex = ["noise-strong", "mandelbrot"].compactMap { chosen[$0] }
        #expect(simple.min() ?? 0 > complex.max() ?? 99, "simple \(simple), complex \(complex): \(chosen)")
        // The 1 % low is targeted when asked, and needs at least the mean's bits.
        let life = try #require(files["life"])
        let low = try await export(life, pool: .low1, vmaf: vmaf)
        let mean = chosen["life"] ?? 0
        #expect(low.crf <= mean, "the 1 % low needs at least the mean's bits: \(low.crf) vs \(mean)")
    }
}
