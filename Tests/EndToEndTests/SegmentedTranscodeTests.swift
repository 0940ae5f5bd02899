import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ffmpeg.transcode` with `segmentSeconds`: kill -9 during segments, rerun until done, and the result is
/// the same video an unsegmented encode makes, in sync with the source's audio.
@Suite struct SegmentedTranscodeTests {
    /// 60 s: a moving test picture, and a 10 ms tone burst at every whole second over silence (so the audio's
    /// position can be measured).
    private func makeClip(at path: String) async throws {
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=480x270:rate=30:duration=60", "-f", "lavfi", "-i",
                "aevalsrc=if(lt(mod(t\\,1)\\,0.01)\\,0.8*sin(2*PI*1000*t)\\,0):s=48000:d=60", "-c:v", "libx264",
                "-preset", "ultrafast", "-g", "45", "-c:a", "aac", "-shortest", path,
            ])
        #expect(made.status == 0, "\(made.stderr)")
    }

    /// ffprobe's answer as `key=value` lines per stream (video first).
    private func streams(_ path: String) async -> [[String: String]] {
        let text = await runTool(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_packets", "-show_entries",
                "stream=codec_type,start_time,duration,nb_read_packets",
                "-of", "compact=p=0:nk=0", path,
            ]
        ).text
        return text.split(separator: "\n").map { line in
            Dictionary(
                line.split(separator: "|").map { field in
                    let pair = field.split(separator: "=", maxSplits: 1).map(String.init)
                    return (pair[0], pair.count > 1 ? pair[1] : "")
                }, uniquingKeysWith: { first, _ in first })
        }.sorted { ($0["codec_type"] ?? "") > ($1["codec_type"] ?? "") }
    }

    /// When the first tone burst at or after `seconds` starts in the decoded audio (mono, 48 kHz).
    private func burst(after seconds: Double, in path: String) async -> Double? {
        let pcm = await runTool(
            "/usr/bin/ffmpeg",
            ["-v", "error", "-i", path, "-map", "0:a", "-ac", "1", "-ar", "48000", "-f", "s16le", "-"]
        ).stdout
        let samples = pcm.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let first = Int(seconds * 48000)
        guard first < samples.count else { return nil }
        return samples[first...].firstIndex { abs(Int($0)) > 3000 }.map { Double($0) / 48000 }
    }

    /// Each frame's PSNR (dB) of `path`'s video against `reference`'s, in frame order.
    private func framePSNR(_ path: String, against reference: String) async -> [Double] {
        let stats = await runTool(
            "/usr/bin/ffmpeg",
            ["-v", "error", "-i", path, "-i", reference, "-lavfi", "[0:v][1:v]psnr=stats_file=-", "-f", "null", "-"]
        ).text
        return stats.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("psnr_avg:") }.flatMap { Double($0.dropFirst(9)) }
        }
    }

    /// The frames at a join are coded as well as the same frames of an unsegmented encode. The source's keyframes
    /// and x264's (every 250 frames) fall on the joins, so both encodes have the same picture types there; a
    /// segment that started and ended cold made the first frame after a join 2.6 dB worse and the last before it
    /// 1.4 dB.
    @Test func theFramesAtAJoinAreAsGoodAsUnsegmented() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let source = scratch.path("in/clip.mp4").path
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=21", "-c:v", "libx264",
                "-preset", "ultrafast", "-g", "50", source,
            ])
        #expect(made.status == 0, "\(made.stderr)")
        let settings = #""video": {"preset": "veryfast", "crf": 23}, "threads": 1"#
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "joins", "inputs": {"path": "in"}, "stages": [
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "out/${input.stem}.mp4", "segmentSeconds": 10, \(settings)}},
              {"id": "plain", "uses": "ffmpeg.transcode", "with": {"output": "plain/${input.stem}.mp4", "segmentSeconds": 0, \(settings)}}
            ]}
            """)
        let run = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let segmented = await framePSNR(scratch.path("out/clip.mp4").path, against: source)
        let plain = await framePSNR(scratch.path("plain/clip.mp4").path, against: source)
        try #require(segmented.count == 525 && plain.count == 525, "\(segmented.count) and \(plain.count) frames")
        for join in [250, 500] {
            for frame in join - 4...join + 4 {
                #expect(
                    plain[frame] - segmented[frame] <= 1,
                    "frame \(frame): \(segmented[frame]) dB, unsegmented \(plain[frame]) dB")
            }
        }
    }

    @Test func aSegmentedEncodeSurvivesKillNineAndMatchesAnUnsegmentedOne() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let source = scratch.path("in/clip.mp4").path
        try await makeClip(at: source)
        let settings = #""video": {"preset": "veryfast", "crf": 26}, "threads": 2"#
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "segments", "inputs": {"path": "in"}, "stages": [
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "out/${input.stem}.mp4", "segmentSeconds": 10, \(settings)}},
              {"id": "plain", "uses": "ffmpeg.transcode", "with": {"output": "plain/${input.stem}.mp4", "segmentSeconds": 0, \(settings)}}
            ]}
            """)
        // Kill while the 2nd and while the 5th segment is encoded: as soon as 1, then 4, are checkpointed.
        let state = scratch.path(".pipeline")
        var logs: [String] = []
        var kills = 0
        for finished in [1, 4] {
            let process = try Binary.start(["run", "wf.json"], in: scratch.root)
            try await waitUntil("\(finished) segment(s) checkpointed") {
                guard process.isRunning else { return true }
                let checkpoints = await stageCheckpoints(under: state, workflow: "segments")
                let segments = checkpoints.values.first?["export"]?["resume"]?["segments"]?.arrayValue ?? []
                return segments.count >= finished
            }
            #expect(process.isRunning, "the encode ended before segment \(finished + 1)")
            process.signal(SIGKILL)
            _ = await process.exit()
            kills += 1
            logs.append(await process.stdout.text())
        }
        // The checkpoint counts each segment's scores; the scores themselves wait beside its part.
        let resume = await stageCheckpoints(under: state, workflow: "segments").values.first?["export"]?["resume"]
        let saved = resume?["segments"]?.arrayValue ?? []
        #expect(
            saved.count >= 4 && saved.allSatisfy { $0["psnr"] == nil && ($0["psnrFrames"]?.intValue ?? 0) > 0 },
            "\(saved)")
        let last = try await Binary.run(["run", "wf.json", "--report", "report.json"], in: scratch.root)
        #expect(last.status == 0, "\(last.stdout)\(last.stderr)")
        logs.append(last.stdout)
        let encoded = logs.map { $0.components(separatedBy: "encoding segment ").count - 1 }.reduce(0, +)
        #expect(encoded <= 6 + kills, "\(encoded) segment encodes for 6 segments and \(kills) kills")
        #expect(last.stdout.contains("4 reused, 2 to encode"), "\(last.stdout)")

        let output = scratch.path("out/clip.mp4").path
        let decoded = await runTool("/usr/bin/ffmpeg", ["-v", "error", "-i", output, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        let segmented = await streams(output)
        let plain = await streams(scratch.path("plain/clip.mp4").path)
        let original = await streams(source)
        #expect(segmented.count == 2)
        #expect(segmented.first?["nb_read_packets"] == plain.first?["nb_read_packets"], "\(segmented) \(plain)")
        for stream in segmented {
            #expect(Double(stream["start_time"] ?? "") == 0, "\(stream)")
        }
        let duration = Double(segmented.first?["duration"] ?? "") ?? 0
        let sourceDuration = Double(original.first?["duration"] ?? "") ?? 0
        #expect(abs(duration - sourceDuration) <= 1.0 / 30 + 0.0001, "\(duration) s against \(sourceDuration) s")

        try await expectPooledLikeThePeer(report: scratch.path("report.json"), export: output, source: source)

        let times = await runTool(
            "/usr/bin/ffprobe",
            ["-v", "error", "-select_streams", "v", "-show_entries", "packet=dts_time", "-of", "csv=p=0", output]
        ).text.split(separator: "\n").compactMap { Double($0) }
        #expect(times.count == 1800)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "decode times go back")

        // The audio against the source's: a burst well after several joins starts at the same moment.
        let aacFrame = 1024.0 / 48000
        for seconds in [0.0, 35.5, 58.5] {
            let expected = await burst(after: seconds, in: source)
            let found = await burst(after: seconds, in: output)
            #expect(expected != nil && found != nil)
            if let expected, let found {
                #expect(abs(found - expected) <= aacFrame, "burst after \(seconds) s: \(found) against \(expected)")
            }
        }
    }

    /// The export's quality report, pooled over segments encoded by three runs, is the psnr filter's over the
    /// whole joined file: every frame (1800), its mean, its worst 1 % (18 frames) and its worst frame.
    private func expectPooledLikeThePeer(report: URL, export: String, source: String) async throws {
        let runReport = try JSONValue(parsing: try Data(contentsOf: report))
        let stage = runReport["items"]?.arrayValue?.first?["stages"]?.arrayValue?.first
        let quality = try #require(stage?["outputs"]?["quality"], "\(runReport)")
        let peer = await framePSNR(export, against: source).map { min($0, 100) }
        try #require(peer.count == 1800)
        let low = peer.sorted().prefix(18)
        #expect(quality["frames"]?.intValue == 1800, "\(quality)")
        let figures = [
            ("mean", peer.reduce(0, +) / 1800), ("low1", low.reduce(0, +) / 18), ("worst", peer.min() ?? 0),
        ]
        for (name, expected) in figures {
            let value = quality[name]?.doubleValue ?? 0
            #expect(abs(value - expected) < 0.05, "\(name) \(value) against the psnr filter's \(expected)")
        }
    }

    /// A damaged stretch in which no frame of a whole segment can be decoded leaves a gap in the video, as it does
    /// in an unsegmented export, instead of failing the export: the segment's encode gives an empty part, and the
    /// join leaves it out and says so.
    @Test func aSegmentWithNothingDecodableLeavesAGapAsAWholeExportDoes() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let source = scratch.path("in/clip.ts").path
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=3", "-f", "lavfi", "-i",
                "sine=frequency=440:duration=3", "-c:v", "libx264", "-preset", "ultrafast", "-g", "5", "-c:a", "aac",
                "-shortest", source,
            ])
        #expect(made.status == 0, "\(made.stderr)")
        // The middle of the file replaced by null packets (as a capture that lost its signal): nothing from about
        // 0.96 s to 2.12 s is there; a keyframe every 0.2 s decodes again after it.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let packets = bytes.count / 188
        let null = Data([0x47, 0x1F, 0xFF, 0x10] + [UInt8](repeating: 0xFF, count: 184))
        for packet in packets * 3 / 10..<packets * 7 / 10 {
            bytes.replaceSubrange(packet * 188..<(packet + 1) * 188, with: null)
        }
        try bytes.write(to: URL(fileURLWithPath: source))
        let settings = #""video": {"preset": "ultrafast"}, "threads": 1"#
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "gap", "inputs": {"path": "in"}, "stages": [
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "out/${input.stem}.mp4", "segmentSeconds": 1, \(settings)}},
              {"id": "plain", "uses": "ffmpeg.transcode", "with": {"output": "plain/${input.stem}.mp4", "segmentSeconds": 0, \(settings)}}
            ]}
            """)
        let run = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(
            run.stdout.contains("1 segment(s) left out: nothing in their range could be decoded"), "\(run.stdout)")
        for output in ["out/clip.mp4", "plain/clip.mp4"] {
            let decode = await runTool(
                "/usr/bin/ffmpeg", ["-v", "error", "-xerror", "-i", scratch.path(output).path, "-f", "null", "-"])
            #expect(decode.status == 0, "\(output): \(decode.stderr)")
        }
        // Both have the pictures before and after the gap, and their video ends at the same time.
        let segmented = await streams(scratch.path("out/clip.mp4").path)
        let plain = await streams(scratch.path("plain/clip.mp4").path)
        let frames = (
            Int(segmented.first?["nb_read_packets"] ?? "") ?? 0, Int(plain.first?["nb_read_packets"] ?? "") ?? 0
        )
        #expect(frames.0 > 10 && frames.0 < 75 && abs(frames.0 - frames.1) <= 2, "\(frames) video frames")
        let ends = [segmented, plain].map { info in
            (Double(info.first?["start_time"] ?? "") ?? 0) + (Double(info.first?["duration"] ?? "") ?? 0)
        }
        #expect(ends[0] > 2.5 && abs(ends[0] - ends[1]) < 0.1, "video ends at \(ends[0]) s, unsegmented \(ends[1]) s")
    }
}
