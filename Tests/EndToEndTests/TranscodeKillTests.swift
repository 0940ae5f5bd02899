import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `kill -9` in the middle of a transcode: no half file under the final name; the rerun redoes the
/// stage and the result is a valid, complete MP4.
@Suite struct TranscodeKillTests {
    @Test func killNineMidTranscodeThenRerun() async throws {
        let scratch = try Scratch()
        let clip = scratch.path("in/long.mp4")
        try FileManager.default.createDirectory(at: clip.deletingLastPathComponent(), withIntermediateDirectories: true)
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=20", "-f", "lavfi",
                "-i", "sine=duration=20", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest",
                clip.path,
            ])
        #expect(made.status == 0, "\(made.stderr)")
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "kill-transcode", "inputs": {"path": "in"}, "stages": [
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "out/${input.stem}.mp4", "video": {"preset": "medium", "crf": 23}}}
            ]}
            """)
        let partial = scratch.path("out/.long.mp4.partial.mp4")
        // Kill once the partial file holds a seeded 25 to 75 kB (of about 2 MB): under way, early in the transcode.
        let random = SeededRandom("killNineMidTranscodeThenRerun")
        let killAt = 25_000 + random.int(in: 0...50_000)
        let process = try Binary.start(["run", "wf.json"], in: scratch.root)
        try await waitUntil("the partial file holds \(killAt) bytes") {
            guard process.isRunning else { return true }
            let size = (try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0
            return size >= killAt
        }
        #expect(process.isRunning, "the transcode finished before it could be killed")
        process.signal(SIGKILL)
        _ = await process.exit()
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out/long.mp4").path))

        let rerun = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let output = scratch.path("out/long.mp4").path
        let text = await runTool(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_frames", "-select_streams", "v", "-show_entries",
                "stream=nb_read_frames,codec_name",
                "-of", "csv=p=0", output,
            ]
        ).text
        #expect(text.trimmingCharacters(in: .whitespacesAndNewlines) == "h264,600")
        #expect(!FileManager.default.fileExists(atPath: partial.path))
    }
}
