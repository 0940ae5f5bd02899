import Foundation
import SharedBatch
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension WorkerTests {
    /// A streamed S3 upload (`"stream": true`, moto) run by two `pipeline worker` processes sharing a batch on
    /// PostgreSQL. One worker is killed with -9 at a seeded moment while its item's export is encoded and its
    /// parts go up, then started again: the item is taken over and its upload resumed. Every object is its export,
    /// byte for byte, no multipart upload is left open, and at most one part is sent twice.
    @Test func aStreamedUploadAcrossTwoWorkersSurvivesAKill() async throws {
        let random = SeededRandom("aStreamedUploadAcrossTwoWorkersSurvivesAKill")
        let scratch = try Scratch()
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        let s3 = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        // Two clips of noise (told apart by their sound) that export to about 20 MB in 1 s segments.
        for index in 0..<2 {
            let made = await runTool(
                "/usr/bin/ffmpeg",
                [
                    "-v", "error", "-f", "lavfi", "-i",
                    "nullsrc=size=480x270:rate=25:duration=6,geq=lum='random(1)*255':cb=128:cr=128", "-f", "lavfi",
                    "-i", "sine=frequency=\(440 + 220 * index):duration=6", "-c:v", "libx264", "-preset", "ultrafast",
                    "-qp", "0", "-c:a", "aac", "-shortest", scratch.path("in/clip\(index).mp4").path,
                ])
            #expect(made.status == 0, "\(made.stderr)")
        }
        try scratch.write(
            "wf.json",
            StreamedUploadTests.workflow(
                name: "streamed-workers", port: s3.port, concurrency: 1, preset: "fast",
                outputs: scratch.path("out").path))
        let submitted = try await Binary.run(["submit", "wf.json", "--db", url], in: scratch.root)
        try #require(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        let artifacts = scratch.path("artifacts").path
        let arguments = ["worker", "--db", url, "--artifacts", artifacts, "--json"] + Self.workerArguments
        let workers = try (0..<2).map { _ in try Binary.start(arguments, in: scratch.root) }
        defer { for worker in workers where worker.isRunning { worker.signal(SIGKILL) } }

        // The victim, and how many bytes of its first 5 MiB part (part 2: the head's goes last) reach the server
        // before the kill: the kill cuts that part off, or comes once it is there, checkpointed or not.
        let victim = workers[random.int(in: 0...1)]
        let threshold = Int(Double(5 << 20) * (0.2 + 0.8 * random.fraction()))
        try await waitUntil("the victim started its streamed upload") {
            guard victim.isRunning else { return true }
            return Self.streamedItem(in: victim.stdout.soFar) != nil
        }
        let item = try #require(Self.streamedItem(in: victim.stdout.soFar), "\(victim.stdout.soFar)")
        let stats = "http://127.0.0.1:\(s3.port)/__stats"
        try await waitUntil("\(threshold) bytes of \(item) at the server") {
            guard victim.isRunning else { return true }
            let received = try? JSONValue(parsing: await httpGet(stats))["receivedByPath"]?["/media/videos/\(item)"]
            return received?.intValue ?? 0 >= threshold
        }
        #expect(victim.isRunning, "the victim stopped before it could be killed")
        // Parts went up while the export was written: it is not in place yet.
        // The export's `output` is in the folder both workers share (a shared batch's outputs are absolute).
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out/\(item)").path), "the export had finished")
        victim.signal(SIGKILL)
        _ = await victim.exit()
        let restarted = try Binary.start(arguments, in: scratch.root)
        defer { if restarted.isRunning { restarted.signal(SIGKILL) } }

        let database = try await BatchDatabase(url: url)
        try await waitUntil("both videos are uploaded", limit: .seconds(300)) {
            let status = try? await BatchQueue(database: database).status()
            return status?.workflows["streamed-workers"]?.byStatus["succeeded"] == 2
        }
        await database.close()
        for worker in workers + [restarted] where worker.isRunning {
            worker.signal(SIGTERM)
            #expect(await worker.exit() == 0)
        }
        var log = ""
        for worker in workers + [restarted] { log += await worker.stdout.text() }
        #expect(log.contains("resuming multipart upload"), "the takeover resumes the upload: \(log)")
        #expect(!log.contains("differs from the bytes uploaded before"), "\(log)")
        // The takeover continues the encode from the victim's segment checkpoints.
        #expect(
            log.matches(of: /(\d+) reused, \d+ to encode/).contains { Int($0.1) ?? 0 > 0 },
            "the takeover reuses the encoded segments: \(log)")

        var total = 0
        for name in ["clip0.mp4", "clip1.mp4"] {
            let export = scratch.path("out/\(name)").path
            #expect(
                await peerTool("s3_tool.py", [String(s3.port), "sha256", "media", "videos/\(name)"])
                    == sha256sum(export), "the object of \(name) is its export")
            total += try #require(try FileManager.default.attributesOfItem(atPath: export)[.size] as? Int)
        }
        #expect(await peerTool("s3_tool.py", [String(s3.port), "uploads", "media"]) == "0")
        // Every part went up once, but the one in flight at the kill (concurrency 1), whole or cut off.
        let received = try JSONValue(parsing: await httpGet(stats))["received"]?.intValue ?? 0
        #expect(received >= total && received <= total + (5 << 20), "\(received) bytes received for \(total)")
        print("aStreamedUploadAcrossTwoWorkersSurvivesAKill: \(received - total) bytes re-sent for one kill")
        try await server.stop()
    }

    /// A streamed S3 upload of an export whose segments two workers share (`--segments`): the item's worker joins
    /// each unit as soon as it is in place, whoever encoded it, and parts go up before the last unit is encoded.
    /// That worker is killed with -9 at a seeded moment once parts are up, and started again: the item is taken
    /// over, its join redone from the units in the store, and its upload resumed. The object is the export, byte
    /// for byte, which is what a one-machine run writes; at most one part is sent twice.
    @Test func aStreamedUploadOfAnExportTheWorkersShareSurvivesAKill() async throws {
        let random = SeededRandom("aStreamedUploadOfAnExportTheWorkersShareSurvivesAKill")
        let scratch = try Scratch()
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        let s3 = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        for folder in ["in", "segments"] {
            try FileManager.default.createDirectory(at: scratch.path(folder), withIntermediateDirectories: true)
        }
        // Ten seconds of noise: about ten units (cut at its keyframes) that export to about 30 MB.
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i",
                "nullsrc=size=480x270:rate=25:duration=10,geq=lum='random(1)*255':cb=128:cr=128", "-f", "lavfi",
                "-i", "sine=frequency=440:duration=10", "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0",
                "-c:a", "aac", "-shortest", scratch.path("in/clip.mp4").path,
            ])
        #expect(made.status == 0, "\(made.stderr)")
        try scratch.write(
            "wf.json",
            StreamedUploadTests.workflow(
                name: "streamed-farm", port: s3.port, concurrency: 1, preset: "fast", outputs: scratch.path("out").path)
        )
        let submitted = try await Binary.run(["submit", "wf.json", "--db", url], in: scratch.root)
        try #require(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        let (segments, root) = (scratch.path("segments").path, scratch.root)
        @Sendable func arguments(_ index: Int) -> [String] {
            [
                "worker", "--db", url, "--segments", segments, "--artifacts",
                root.appendingPathComponent("artifacts-\(index)").path, "--json",
            ] + Self.workerArguments
        }
        let workers = try (0..<2).map { try Binary.start(arguments($0), in: scratch.root) }
        defer { for worker in workers where worker.isRunning { worker.signal(SIGKILL) } }

        // The victim is the item's worker: the one that streams its upload.
        try await waitUntil("a worker started the streamed upload") {
            workers.contains { Self.streamedItem(in: $0.stdout.soFar) != nil } || !workers.allSatisfy(\.isRunning)
        }
        let victim = try #require(
            workers.first { Self.streamedItem(in: $0.stdout.soFar) != nil },
            "a worker stopped: \(workers.map { $0.stdout.soFar + $0.stderr.soFar })")
        let threshold = Int(Double(5 << 20) * (0.2 + 0.8 * random.fraction()))
        let stats = "http://127.0.0.1:\(s3.port)/__stats"
        try await waitUntil("\(threshold) bytes at the server") {
            guard victim.isRunning else { return true }
            let received = try? JSONValue(parsing: await httpGet(stats))["receivedByPath"]?["/media/videos/clip.mp4"]
            return received?.intValue ?? 0 >= threshold
        }
        #expect(victim.isRunning, "the victim stopped before it could be killed")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out/clip.mp4").path), "the export had finished")
        let database = try await BatchDatabase(url: url)
        let split = try #require(try await SegmentQueue(database: database).splits().first)
        #expect(split.done < split.units, "every unit was encoded before parts went up")
        victim.signal(SIGKILL)
        _ = await victim.exit()
        let restarted = try Binary.start(arguments(workers.firstIndex { $0 === victim } ?? 0), in: scratch.root)
        defer { if restarted.isRunning { restarted.signal(SIGKILL) } }

        try await waitUntil("the video is uploaded", limit: .seconds(300)) {
            let status = try? await BatchQueue(database: database).status()
            return status?.workflows["streamed-farm"]?.byStatus["succeeded"] == 1
        }
        await database.close()
        var logs: [String] = []
        for worker in workers + [restarted] {
            if worker.isRunning {
                worker.signal(SIGTERM)
                #expect(await worker.exit() == 0)
            }
            logs.append(await worker.stdout.text())
        }
        let log = logs.joined()
        let encodes = workers.indices.map { SegmentFarmTests.encodes(in: logs[$0]) }
        #expect(encodes.allSatisfy { $0 > 0 }, "both workers encode units: \(encodes)")
        #expect(log.contains("segmented transcode shared with the workers"), "\(log)")
        #expect(log.contains("resuming multipart upload"), "the takeover resumes the upload: \(log)")
        #expect(!log.contains("differs from the bytes uploaded before"), "\(log)")
        #expect(await peerTool("s3_tool.py", [String(s3.port), "uploads", "media"]) == "0")
        let total = try #require(
            try FileManager.default.attributesOfItem(atPath: scratch.path("out/clip.mp4").path)[.size] as? Int)
        let received = try JSONValue(parsing: await httpGet(stats))["received"]?.intValue ?? 0
        #expect(received >= total && received <= total + (5 << 20), "\(received) bytes received for \(total)")
        print("aStreamedUploadOfAnExportTheWorkersShareSurvivesAKill: \(received - total) bytes re-sent for one kill")
        try await StreamedUploadTests.expectObjectIsTheExport(
            scratch.path("out/clip.mp4").path, s3: s3, plainStage: StreamedUploadTests.export(preset: "fast"),
            in: scratch)
        try await server.stop()
    }

    /// The item whose streamed multipart upload a worker's `--json` lines say it started.
    static func streamedItem(in lines: String) -> String? {
        for line in lines.split(separator: "\n") where line.contains("as it is written") {
            if let event = try? JSONValue(parsing: String(line)),
                event["message"]?.stringValue?.contains(
                    "started multipart upload") == true
            {
                return event["item"]?.stringValue
            }
        }
        return nil
    }
}
