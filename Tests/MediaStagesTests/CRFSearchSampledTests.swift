import Foundation
import StageKit
import TestSupport
import Testing

@testable import MediaStages

/// `quality.target` on a source long enough to be sampled (36 s: 3 samples of 4 s, each encoded with a second either
/// side left out of its scores): the export, measured by an independent libvmaf, lands within ±1 of the target; the
/// chosen probe's size estimate is within 15 % of the export's video and, with the audio of a mono source and the
/// container, of its file; and a size budget lands the export near the budget, not over it.
@Suite struct CRFSearchSampledTests {
    let folder = temporaryFolder()
    static let seconds = 36.0

    /// A lossless 36 s clip at 160x90, 12 fps, of a moving pattern with light noise, and a mono tone.
    private func source() async throws -> URL {
        let file = folder.appendingPathComponent("source.mp4")
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                "testsrc2=size=160x90:rate=12:duration=\(Int(Self.seconds)),noise=alls=8:allf=t:all_seed=48", "-f",
                "lavfi", "-i", "sine=duration=\(Int(Self.seconds))", "-c:v", "libx264", "-qp", "0", "-pix_fmt",
                "yuv420p", "-c:a", "aac", "-ac", "1", "-shortest", file.path,
            ])
        try #require(made.status == 0, "\(made.stderr)")
        return file
    }

    private func export(_ source: URL, name: String, codec: String, quality: JSONValue) async throws -> JSONValue {
        let run = await StageHarness(stateFolder: folder.appendingPathComponent("state-\(name)")).run(
            TranscodeStage.self,
            options: [
                "file": .string(source.path), "output": .string(folder.appendingPathComponent("\(name).mp4").path),
                "video": ["codec": .string(codec), "preset": "fast"], "quality": quality,
            ])
        return try run.outputs.get()
    }

    /// The probe the search chose: its estimated bytes of video.
    private func chosenEstimate(_ search: JSONValue) throws -> Int64 {
        let crf = try #require(search["crf"]?.doubleValue)
        let probe = try #require(search["probes"]?.arrayValue?.first { $0["crf"]?.doubleValue == crf })
        return Int64(try #require(probe["size"]?.intValue))
    }

    /// Bytes of the video packets of `file`.
    private func videoBytes(_ file: URL) async throws -> Double {
        let info = try await MediaToolkit.probe(file.path)
        let video = try #require(info.video)
        return Double(video.bitRate) * Double(video.frameCount) / video.fps / 8
    }

    @Test(arguments: ["h264", "hevc"])
    func aSampledSourceLandsWithinOnePointOfTheTarget(codec: String) async throws {
        #expect(CRFSearch.sampleCount(duration: Self.seconds) == 3)
        let source = try await source()
        let vmaf = try await IndependentVMAF()
        let free = try await export(source, name: "free-\(codec)", codec: codec, quality: ["target": 93])
        let search = try #require(free["crfSearch"])
        let file = folder.appendingPathComponent("free-\(codec).mp4")
        let theirs = try await vmaf.score(file, against: source, pool: .mean)
        let crf = search["crf"]?.doubleValue ?? 0
        print(
            "\(codec): CRF \(crf), independent VMAF \(String(format: "%.2f", theirs)), probes \(search["probes"] ?? .null)"
        )
        #expect(search["note"] == nil, "\(search)")
        #expect(abs(theirs - 93) <= 1, "\(codec): CRF \(crf) scores \(theirs) by the independent libvmaf")

        // The size estimate: the video alone, and the file with the audio and the container besides.
        let estimate = Double(try chosenEstimate(search))
        let video = try await videoBytes(file)
        #expect(abs(estimate / video - 1) <= 0.15, "\(codec): estimated \(estimate) bytes of video, written \(video)")
        let info = try await MediaToolkit.probe(source.path)
        let beside = Double(Export.bytesBesideVideo(info, settings: TranscodeSettings()))
        let size = Double(try #require(free["size"]?.intValue))
        #expect(abs((estimate + beside) / size - 1) <= 0.15, "\(codec): estimated \(estimate + beside), file \(size)")
        print("\(codec): estimate \(Int(estimate)) + \(Int(beside)) bytes, video \(Int(video)), file \(Int(size))")
        if codec == "h264" { try await aBudgetLandsNearIt(source, free: size, freeVideo: video) }
    }

    /// A budget of 60 % of the free export's video, with its audio and container as they were: the export keeps
    /// within it, and close under it.
    private func aBudgetLandsNearIt(_ source: URL, free: Double, freeVideo: Double) async throws {
        let budget = Int(free - freeVideo * 0.4)
        let held = try await export(
            source, name: "held", codec: "h264", quality: ["target": 93, "maxSize": .int(budget)])
        let note = held["crfSearch"]?["note"]?.stringValue ?? ""
        #expect(note.contains("over maxSize"), "\(note)")
        let size = try #require(held["size"]?.intValue)
        print("budget \(budget): export \(size) bytes (\(String(format: "%.3f", Double(size) / Double(budget))))")
        #expect(size <= budget, "\(size) bytes for a budget of \(budget)")
        // One CRF step is about a tenth of the video's size: the lowest CRF within the budget lands close under it.
        #expect(Double(size) >= Double(budget) * 0.8, "\(size) bytes for a budget of \(budget)")
    }
}
