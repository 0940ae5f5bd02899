import Foundation
import PipelineKit
import SharedBatch
import StageKit
import StageRuntime
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The segments of one long source encoded by several workers of a shared batch (real PostgreSQL, workers started
/// as processes), joined into the same bytes a one-machine segmented run writes.
@Suite(.serialized) struct SegmentFarmTests {
    /// The export's settings in both workflows: one thread, 5 s segments.
    static let settings = #""video": {"preset": "veryfast", "crf": 30}, "threads": 1, "segmentSeconds": 5"#

    /// A batch of one 1-minute source (320x180, 25 fps, a keyframe every second, a tone, three subtitle cues): twelve
    /// 5 s segments and the audio, as many units as a longer source in longer segments, at half the encoding. It is
    /// submitted with an export to `farm/`, and a local workflow writes the same export to `local/`.
    struct Farm: Sendable {
        /// The test's scratch folder (which the test owns).
        let root: URL
        let server: PostgresServer
        let url: String
        let segments: String

        init(in root: URL, store: String? = nil) async throws {
            self.root = root
            server = try await PostgresServer.start()
            url = try await server.createDatabase()
            segments = store ?? root.appendingPathComponent("segments").path
            try FileManager.default.createDirectory(at: path("in"), withIntermediateDirectories: true)
            if store == nil {
                try FileManager.default.createDirectory(atPath: segments, withIntermediateDirectories: true)
            }
            // Three cues, in the first, the seventh and the last segment: the audio unit carries them into the join.
            try Data(
                "1\n00:00:02,500 --> 00:00:04,000\nopening\n\n2\n00:00:32,500 --> 00:00:33,500\nmiddle\n\n3\n00:00:56,000 --> 00:00:59,000\nend\n\n"
                    .utf8
            ).write(to: path("cues.srt"))
            let made = await runTool(
                "/usr/bin/ffmpeg",
                [
                    "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=60", "-f", "lavfi",
                    "-i", "sine=frequency=440:duration=60", "-i", path("cues.srt").path, "-map", "0", "-map", "1",
                    "-map", "2", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-c:a", "aac", "-c:s",
                    "mov_text", "-t", "60", path("in/master.mp4").path,
                ])
            #expect(made.status == 0, "\(made.stderr)")
            for (name, folder) in [("farm", "farm"), ("local", "local")] {
                try Data(
                    """
                    {"version": 1, "name": "\(name)", "inputs": {"path": "in"}, "stages": [
                      {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "\(path(folder).path)/${input.stem}.mp4", \(settings)}}
                    ]}
                    """.utf8
                ).write(to: path("\(name).json"))
            }
            let submitted = try await Binary.run(["submit", "farm.json", "--db", url], in: root)
            #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        }

        func path(_ name: String) -> URL {
            root.appendingPathComponent(name)
        }

        /// A worker with a scratch folder of its own, sharing only the segment store with the others.
        func startWorker(_ index: Int, environment: [String: String] = [:], extra: [String] = []) throws
            -> RunningBinary
        {
            try Binary.start(
                [
                    "worker", "--db", url, "--segments", segments, "--artifacts",
                    path("artifacts-\(index)").path,
                ] + WorkerTests.workerArguments + extra, in: root, environment: environment)
        }

        /// The split item's units: how many, and how many are done.
        func units() async throws -> (units: Int, done: Int) {
            let database = try await BatchDatabase(url: url)
            let splits = try await SegmentQueue(database: database).splits()
            await database.close()
            return (splits.first?.units ?? 0, splits.first?.done ?? 0)
        }

        /// Waits until the master is encoded; when it failed instead, records why, with the workers' last lines.
        func waitUntilDone(_ workers: [RunningBinary]) async throws {
            let database = try await BatchDatabase(url: url)
            try await waitUntil("the master is encoded or failed", limit: .seconds(300)) {
                let counts = try? await BatchQueue(database: database).status().workflows["farm"]?.byStatus
                return counts?["succeeded"] == 1 || counts?["failed"] == 1
            }
            let status = try await BatchQueue(database: database).status()
            await database.close()
            guard status.workflows["farm"]?.byStatus["succeeded"] != 1 else { return }
            let tails = workers.map { $0.stdout.soFar.split(separator: "\n").suffix(15).joined(separator: "\n") }
            Issue.record(
                "the master failed: \(status.failed.map { $0.error?.message ?? "" })\n\(tails.joined(separator: "\n--\n"))"
            )
        }

        /// Runs the local workflow (one machine, segments in its own scratch folder) and compares its export with
        /// the farm's, byte for byte.
        func expectTheLocalRunsBytes() async throws {
            let local = try await Binary.run(["run", "local.json"], in: root)
            #expect(local.status == 0, "\(local.stdout)\(local.stderr)")
            let farmed = await sha256sum(path("farm/master.mp4").path)
            let alone = await sha256sum(path("local/master.mp4").path)
            #expect(farmed == alone, "the farm's export differs from a one-machine segmented run's")
            let frames = await runTool(
                "/usr/bin/ffprobe",
                [
                    "-v", "error", "-count_packets", "-select_streams", "v", "-show_entries",
                    "stream=nb_read_packets", "-of", "csv=p=0", path("farm/master.mp4").path,
                ]
            ).text.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(frames == "1500")
            let decoded = await runTool(
                "/usr/bin/ffmpeg", ["-v", "error", "-i", path("farm/master.mp4").path, "-f", "null", "-"])
            #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
            let cues = await runTool(
                "/usr/bin/ffmpeg", ["-v", "error", "-i", path("farm/master.mp4").path, "-map", "0:s", "-f", "srt", "-"])
            #expect(
                ["opening", "middle", "end"].allSatisfy { cues.text.contains("\n\($0)\n") },
                "the subtitles come through the farm: \(cues.text)\(cues.stderr)")
        }
    }

    /// Stops the workers with SIGTERM (each exits with 0) and returns their output.
    static func stop(_ workers: [RunningBinary]) async -> [String] {
        var logs: [String] = []
        for worker in workers {
            worker.signal(SIGTERM)
            #expect(await worker.exit() == 0)
            logs.append(await worker.stdout.text())
        }
        return logs
    }

    /// How many units a worker's output says it encoded.
    static func encodes(in log: String) -> Int {
        log.components(separatedBy: "encoding video-").count - 1 + log.components(separatedBy: "encoding audio").count
            - 1
    }

    @Test func twoWorkersEncodeTheSegmentsOfOneSource() async throws {
        let scratch = try Scratch()
        let farm = try await Farm(in: scratch.root)
        let workers = try (0..<2).map { try farm.startWorker($0) }
        defer { workers.forEach { $0.signal(SIGKILL) } }
        try await farm.waitUntilDone(workers)
        let logs = await Self.stop(workers)
        let counts = logs.map(Self.encodes)
        #expect(counts.allSatisfy { $0 > 0 }, "both workers encode units: \(counts)\n\(logs.joined())")
        #expect(counts.reduce(0, +) == 13, "12 segments and the audio, each encoded once: \(counts)")
        let left = (try? FileManager.default.subpathsOfDirectory(atPath: farm.segments)) ?? []
        #expect(!left.contains { $0.hasSuffix(".mp4") || $0.contains("video-") }, "units left in the store: \(left)")
        try await farm.expectTheLocalRunsBytes()
        try await farm.server.stop()
    }

    @Test func workersSharingNoFolderShareTheSegmentsThroughS3() async throws {
        let scratch = try Scratch()
        let moto = try await PeerServer(script: "s3_server.py", arguments: ["units"])
        let farm = try await Farm(in: scratch.root, store: "s3://units/farm")
        let environment = [
            "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:\(moto.port)",
        ]
        let workers = try (0..<2).map { try farm.startWorker($0, environment: environment) }
        defer { workers.forEach { $0.signal(SIGKILL) } }
        try await farm.waitUntilDone(workers)
        let logs = await Self.stop(workers)
        let counts = logs.map(Self.encodes)
        #expect(counts.allSatisfy { $0 > 0 } && counts.reduce(0, +) == 13, "\(counts)\n\(logs.joined())")
        let listing = await runTool(
            "/usr/bin/curl",
            [
                "-sS", "--max-time", "10", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "test:test",
                "http://127.0.0.1:\(moto.port)/units?list-type=2&prefix=farm/",
            ]
        ).text
        #expect(listing.contains("ListBucketResult") && !listing.contains("<Key>"), "left in the bucket: \(listing)")
        try await farm.expectTheLocalRunsBytes()
        withExtendedLifetime(moto) {}
        try await farm.server.stop()
    }

    /// Units planned with another x264 build (a worker elsewhere, with another FFmpeg) are left alone, and the
    /// worker says so once.
    @Test func aWorkerLeavesUnitsOfAnotherEncoderBuildAlone() async throws {
        let scratch = try Scratch()
        let farm = try await Farm(in: scratch.root)
        let database = try await BatchDatabase(url: farm.url)
        let claim = try #require(try await BatchQueue(database: database).claim(for: "elsewhere", lease: .seconds(600)))
        let plan = SegmentPlan(
            id: "elsewhere", input: claim.item.input.path, settings: ["crf": 30], threads: 1, encoder: "x264-1",
            seconds: 20,
            units: [
                SegmentUnit(index: 0, kind: .video, start: 0, end: 10, seconds: 10),
                SegmentUnit(index: 1, kind: .video, start: 10, end: nil, seconds: 10),
            ])
        _ = try await SegmentQueue(database: database).publish(plan, item: claim.item.id, generation: claim.generation)
        let worker = try farm.startWorker(0)
        defer { worker.signal(SIGKILL) }
        try await waitUntil("the worker says it leaves the plan alone") {
            worker.stdout.soFar.contains("leaving the units of segment plan elsewhere")
        }
        // Three more seconds of heartbeats (one a second): the worker has looked for work many times since.
        let first = try await Self.lastHeartbeat(of: database)
        try await waitUntil("three more seconds of heartbeats") {
            try await Self.lastHeartbeat(of: database) >= first.addingTimeInterval(3)
        }
        let units = try await SegmentQueue(database: database).units(of: "elsewhere")
        #expect(units.allSatisfy { $0.status == .queued && $0.attempts == 0 }, "\(units)")
        let times = worker.stdout.soFar.components(separatedBy: "leaving the units of segment plan elsewhere").count - 1
        #expect(times == 1, "said \(times) times")
        worker.signal(SIGTERM)
        #expect(await worker.exit() == 0)
        await database.close()
        try await farm.server.stop()
    }

    /// The worker's latest heartbeat.
    static func lastHeartbeat(of database: BatchDatabase) async throws -> Date {
        try await BatchQueue(database: database).status().workers.map(\.heartbeatAt).max() ?? .distantPast
    }

    @Test func aWorkerKilledDuringAUnitLosesThatUnitOnly() async throws {
        let random = SeededRandom("aWorkerKilledDuringAUnitLosesThatUnitOnly")
        let scratch = try Scratch()
        let farm = try await Farm(in: scratch.root)
        var workers = try (0..<2).map { try farm.startWorker($0) }
        defer { workers.forEach { $0.signal(SIGKILL) } }
        var logs: [String] = []
        var kills = 0
        for target in [3 + random.int(in: 0...2), 8 + random.int(in: 0...2)] {
            try await waitUntil("\(target) units are done") { (try await farm.units()).done >= target }
            let victim = random.int(in: 0...1)
            print("aWorkerKilledDuringAUnitLosesThatUnitOnly: killing worker \(victim) after \(target) units")
            workers[victim].signal(SIGKILL)
            _ = await workers[victim].exit()
            logs.append(await workers[victim].stdout.text())
            kills += 1
            workers[victim] = try farm.startWorker(victim)
        }
        try await farm.waitUntilDone(workers)
        for worker in workers {
            worker.signal(SIGTERM)
            _ = await worker.exit()
            logs.append(await worker.stdout.text())
        }
        let encodes = logs.map(Self.encodes).reduce(0, +)
        #expect(encodes <= 13 + kills, "\(encodes) unit encodes for 13 units and \(kills) kills")
        try await farm.expectTheLocalRunsBytes()
        try await farm.server.stop()
    }
}
