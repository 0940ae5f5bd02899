import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// HEVC and AV1 exports in segments: a kill -9 after the first segment, a rerun that reuses it, and a file that
/// decodes cleanly with every frame, both tracks from 0.
@Suite struct SegmentedCodecKillTests {
    @Test(arguments: ["hevc", "av1"])
    func aSegmentedEncodeResumesAfterKillNine(codec: String) async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let source = scratch.path("in/clip.mp4").path
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=30:duration=12", "-f", "lavfi", "-i",
                "sine=frequency=440:duration=12", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-c:a", "aac",
                "-shortest", source,
            ])
        #expect(made.status == 0, "\(made.stderr)")
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "segments-\(codec)", "inputs": {"path": "in"}, "stages": [
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "out/${input.stem}.mp4", "segmentSeconds": 3,
               "threads": 2, "video": {"codec": "\(codec)", "preset": "medium"}}}
            ]}
            """)
        let state = scratch.path(".pipeline")
        let process = try Binary.start(["run", "wf.json"], in: scratch.root)
        try await waitUntil("a segment checkpointed") {
            guard process.isRunning else { return true }
            let checkpoints = await stageCheckpoints(under: state, workflow: "segments-\(codec)")
            return !(checkpoints.values.first?["export"]?["resume"]?["segments"]?.arrayValue ?? []).isEmpty
        }
        #expect(process.isRunning, "the encode ended before it could be killed")
        process.signal(SIGKILL)
        _ = await process.exit()

        let last = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(last.status == 0, "\(last.stdout)\(last.stderr)")
        #expect(!last.stdout.contains("starting the segments over"), "\(last.stdout)")
        #expect(!last.stdout.contains("segments of about 3.0 s, 0 reused"), "\(last.stdout)")

        let output = scratch.path("out/clip.mp4").path
        let decoded = await runTool("/usr/bin/ffmpeg", ["-v", "error", "-i", output, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        let probe = await runTool(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_packets", "-show_entries",
                "stream=codec_type,codec_name,codec_tag_string,start_time,nb_read_packets", "-of", "csv=p=0", output,
            ]
        ).text
        let lines = probe.split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
        let video = try #require(lines.first { $0.contains("video") })
        #expect(video.contains(codec) && video.contains(codec == "hevc" ? "hvc1" : "av01"), "\(video)")
        #expect(video.last == "360", "\(video)")
        #expect(lines.contains { $0.contains("audio") }, "\(lines)")
        for line in lines {
            #expect(line.contains("0.000000"), "a track does not start at 0: \(line)")
        }
    }
}
