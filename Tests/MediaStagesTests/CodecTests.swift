import Foundation
import MediaStages
import StageKit
import TestSupport
import Testing

/// HEVC and AV1: what they write, that pinned threads give the same bytes, and that segments join into the video
/// one pass makes.
@Suite struct CodecTests {
    let folder = temporaryFolder()

    private func harness() -> StageHarness {
        StageHarness(stateFolder: folder.appendingPathComponent("state-\(UUID().uuidString)"))
    }

    @Test(arguments: ["hevc", "av1"])
    func pinnedThreadsGiveTheSameBytesThatDecodeCleanly(codec: String) async throws {
        let clip = folder.appendingPathComponent("clip.mp4")
        try await makeClip(seconds: 2, size: "320x180", at: clip)
        var digests: [String] = []
        for run in 0..<2 {
            let output = folder.appendingPathComponent("\(codec)-\(run).mp4")
            let result = await harness().run(
                TranscodeStage.self,
                options: [
                    "file": .string(clip.path), "output": .string(output.path), "threads": 2,
                    "video": ["codec": .string(codec), "preset": "veryfast"],
                ])
            let outputs = try result.outputs.get()
            #expect(outputs["frames"]?.intValue == 60)
            digests.append(try SHA256Digest.of(output))
            let probe = try await Probe.of(output.path)
            #expect(probe.stream("video")?["codec_name"] == .string(codec))
            #expect(probe.stream("video")?["codec_tag_string"] == (codec == "hevc" ? "hvc1" : "av01"))
            #expect(probe.stream("video")?["pix_fmt"] == "yuv420p")
            #expect(probe.stream("audio")?["codec_name"] == "aac")
            let decode = await runTool(
                "/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", output.path, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        }
        #expect(digests[0] == digests[1], "two encodes with 2 threads differ")
    }

    @Test(arguments: ["hevc", "av1"])
    func segmentsJoinIntoTheVideoOnePassMakes(codec: String) async throws {
        let clip = folder.appendingPathComponent("clip.mp4")
        try await makeClip(seconds: 3, size: "320x180", at: clip)
        var probes: [Probe] = []
        for segments in [0.0, 1.0] {
            let output = folder.appendingPathComponent("\(codec)-\(segments).mp4")
            let result = await harness().run(
                TranscodeStage.self,
                options: [
                    "file": .string(clip.path), "output": .string(output.path), "segmentSeconds": .double(segments),
                    "threads": 2, "video": ["codec": .string(codec), "preset": "veryfast"],
                ])
            #expect(try result.outputs.get()["frames"]?.intValue == 90)
            probes.append(try await Probe.of(output.path))
            let decode = await runTool(
                "/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", output.path, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
        }
        let (whole, segmented) = (probes[0], probes[1])
        #expect(segmented.stream("video")?["codec_tag_string"] == whole.stream("video")?["codec_tag_string"])
        #expect(abs(segmented.duration - whole.duration) <= 1.0 / 30 + 0.001)
        #expect(segmented.streams.count == 2)
    }
}

/// SHA-256 of a file, as lowercase hex.
enum SHA256Digest {
    static func of(_ url: URL) throws -> String {
        let result = Process()
        result.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        result.arguments = [url.path]
        let output = Pipe()
        result.standardOutput = output
        try result.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        result.waitUntilExit()
        return String(text.prefix(64))
    }
}
