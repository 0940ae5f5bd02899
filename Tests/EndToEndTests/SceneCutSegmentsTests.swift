import Foundation
import NIOConcurrencyHelpers
import SharedBatch
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Segments cut at scene changes (`segmentCuts: scenes`, asked for): the plan is made once per item, kept in the
/// checkpoint, and its join is the same bytes after a kill -9, and whichever workers of a shared batch encoded which
/// segments.
@Suite(.serialized) struct SceneCutSegmentsTests {
    /// Where the clip's scenes change: testsrc2, mandelbrot, smptebars, then testsrc2 again (seconds, 25 fps).
    static let cuts = [5.6, 9.2, 15.8]
    /// The export's settings: one thread, 5 s segments, so each cut lies within a quarter of a segment of a multiple.
    static let settings =
        #""video": {"preset": "veryfast", "crf": 30}, "threads": 1, "segmentSeconds": 5, "segmentCuts": "scenes""#

    /// 20 s at 25 fps with a tone, cut at ``cuts``; keyframes every 2 s and none at the cuts (x264's own scene-cut
    /// detection off), so the segments start at frames that are not keyframes of the source.
    static func makeClip(at path: String) async {
        let (a, b, c) = (cuts[0], cuts[1] - cuts[0], cuts[2] - cuts[1])
        let size = "size=480x270:rate=25"
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=\(size):duration=\(a)", "-f", "lavfi", "-i",
                "mandelbrot=\(size)", "-f", "lavfi", "-i", "smptebars=\(size):duration=\(c)", "-f", "lavfi", "-i",
                "testsrc2=\(size):duration=\(20 - cuts[2])", "-f", "lavfi", "-i", "sine=frequency=440:duration=20",
                "-filter_complex", "[1]trim=duration=\(b),setpts=PTS-STARTPTS[m];[0][m][2][3]concat=n=4:v=1:a=0[v]",
                "-map", "[v]", "-map", "4", "-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "50",
                "-x264-params", "scenecut=0", "-c:a", "aac", "-t", "20", path,
            ])
        #expect(made.status == 0, "\(made.stderr)")
    }

    /// The workflow `name` exporting the folder `in` into `folder`.
    static func workflow(_ name: String, into folder: String) -> String {
        """
        {"version": 1, "name": "\(name)", "inputs": {"path": "in"}, "stages": [
          {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "\(folder)/${input.stem}.mp4", \(settings)}}
        ]}
        """
    }

    /// Whether `starts` are the clip's start and its cuts, at their frames.
    static func startAtTheCuts(_ starts: [Double]) -> Bool {
        starts.count == cuts.count + 1 && zip(starts, [0] + cuts).allSatisfy { abs($0 - $1) < 1e-6 }
    }

    /// A run killed with -9 as soon as its scene-cut plan is checkpointed resumes with that plan (no second pass
    /// over the source) and writes the bytes of a run never interrupted.
    @Test func aSceneCutPlanSurvivesKillNine() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        await Self.makeClip(at: scratch.path("in/clip.mp4").path)
        try scratch.write("cut.json", Self.workflow("cut", into: "out"))
        try scratch.write("whole.json", Self.workflow("whole", into: "whole"))
        let state = scratch.path(".pipeline")
        let killed = try Binary.start(["run", "cut.json"], in: scratch.root)
        let planned: @Sendable () async -> JSONValue? = {
            await stageCheckpoints(under: state, workflow: "cut").values.first?["export"]?["resume"]
        }
        let first = NIOLockedValueBox<JSONValue?>(nil)
        try await waitUntil("the plan is checkpointed") {
            guard let plan = await planned() else { return !killed.isRunning }
            first.withLockedValue { $0 = $0 ?? plan }
            return true
        }
        let running = killed.isRunning
        killed.signal(SIGKILL)
        _ = await killed.exit()
        let log = await killed.stdout.text()
        #expect(running, "the run ended before it was killed: \(log)")
        // The plan is checkpointed before the first segment is done.
        let early = first.withLockedValue { $0 }
        #expect(
            early?["cuts"] == .string("scenes") && early?["segments"] == .array([]),
            "the first checkpoint: \(String(describing: early))")
        let plan = await planned()
        let starts = plan?["starts"]?.arrayValue?.compactMap(\.doubleValue) ?? []
        #expect(Self.startAtTheCuts(starts), "the segments start at the scene changes: \(starts)")

        let resumed = try await Binary.run(["run", "cut.json"], in: scratch.root)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(!resumed.stdout.contains("finding the scene changes"), "the plan is made once: \(resumed.stdout)")
        let whole = try await Binary.run(["run", "whole.json"], in: scratch.root)
        #expect(whole.status == 0 && whole.stdout.contains("finding the scene changes"), "\(whole.stdout)")
        let (cut, alone) = (
            await sha256sum(scratch.path("out/clip.mp4").path), await sha256sum(scratch.path("whole/clip.mp4").path)
        )
        #expect(cut == alone, "the resumed export differs from one never interrupted")
        let frames = await runTool(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_packets", "-select_streams", "v", "-show_entries", "stream=nb_read_packets",
                "-of", "csv=p=0", scratch.path("out/clip.mp4").path,
            ]
        ).text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(frames == "500", "every frame once")
    }

    /// Two workers of a shared batch (real PostgreSQL) encode the units of one scene-cut plan; the join is the bytes
    /// a one-machine run writes.
    @Test func twoWorkersJoinTheBytesOfOneMachine() async throws {
        let scratch = try Scratch()
        let root = scratch.root
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: scratch.path("segments"), withIntermediateDirectories: true)
        await Self.makeClip(at: scratch.path("in/clip.mp4").path)
        try scratch.write("farm.json", Self.workflow("farm", into: root.appendingPathComponent("farm").path))
        try scratch.write("local.json", Self.workflow("local", into: "local"))
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        let submitted = try await Binary.run(["submit", "farm.json", "--db", url], in: root)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        let workers = try (0..<2).map { index in
            try Binary.start(
                [
                    "worker", "--db", url, "--segments", scratch.path("segments").path, "--artifacts",
                    scratch.path("artifacts-\(index)").path,
                ] + WorkerTests.workerArguments, in: root)
        }
        defer { workers.forEach { $0.signal(SIGKILL) } }
        let database = try await BatchDatabase(url: url)
        try await waitUntil("the clip is encoded or failed", limit: .seconds(120)) {
            let counts = try? await BatchQueue(database: database).status().workflows["farm"]?.byStatus
            return counts?["succeeded"] == 1 || counts?["failed"] == 1
        }
        await database.close()
        var logs: [String] = []
        for worker in workers {
            worker.signal(SIGTERM)
            #expect(await worker.exit() == 0)
            logs.append(await worker.stdout.text())
        }
        let encodes = logs.map { $0.components(separatedBy: "encoding video-").count - 1 }
        #expect(encodes.reduce(0, +) == Self.cuts.count + 1, "each segment encoded once: \(encodes)\n\(logs.joined())")
        let found = logs.joined().components(separatedBy: "finding the scene changes").count - 1
        #expect(found == 1, "the holder finds the scene changes once; the other worker takes the plan's units")

        let local = try await Binary.run(["run", "local.json"], in: root)
        #expect(local.status == 0, "\(local.stdout)\(local.stderr)")
        #expect(local.stdout.contains("3 of 3 segment joins are at one"), "\(local.stdout)")
        let (farmed, alone) = (
            await sha256sum(scratch.path("farm/clip.mp4").path), await sha256sum(scratch.path("local/clip.mp4").path)
        )
        #expect(!farmed.isEmpty && farmed == alone, "the farm's export differs from a one-machine run's")
        try await server.stop()
    }
}
