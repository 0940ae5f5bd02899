import Foundation
import SharedBatch
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// export → (thumbnail ∥ s3.upload ∥ tus.upload) against moto and tuspyserver, with the S3 branch failing for
/// real (its bucket does not exist): the other branches finish, the item fails, and once the bucket is right a
/// rerun runs the S3 branch alone. Locally and through a worker on PostgreSQL.
@Suite struct BranchedWorkflowTests {
    /// The peers and files of one test.
    final class Setup {
        let scratch: Scratch
        let s3: PeerServer
        let tus: PeerServer

        init() async throws {
            s3 = try await PeerServer(script: "s3_server.py", arguments: ["media"])
            tus = try await PeerServer(script: "tus_server.py")
            scratch = try Scratch()
            try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
            let made = await runTool(
                "/usr/bin/ffmpeg",
                [
                    "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=2", "-f", "lavfi",
                    "-i", "sine=frequency=440:duration=2", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac",
                    "-shortest", scratch.path("in/clip.mp4").path,
                ])
            #expect(made.status == 0, "\(made.stderr)")
            try scratch.write(
                "wf.json",
                """
                {"version": 1, "name": "branches", "inputs": {"path": "in"}, "vars": {"bucket": "missing"},
                 "defaults": {"retry": {"attempts": 1}},
                 "stages": [
                  {"id": "export", "uses": "ffmpeg.transcode", "with": {"video": {"preset": "ultrafast"}, "threads": 1}},
                  {"id": "thumbnail", "uses": "ffmpeg.thumbnail", "after": ["export"], "with": {"file": "${export.path}", "maxWidth": 160}},
                  {"id": "s3", "uses": "s3.upload", "after": ["export"], "with": {"endpoint": "http://127.0.0.1:\(s3.port)",
                   "bucket": "${vars.bucket}", "key": "videos/${input.name}", "file": "${export.path}",
                   "accessKeyId": "test", "secretAccessKey": "test"}},
                  {"id": "tus", "uses": "tus.upload", "after": ["export"], "with": {"endpoint": "http://127.0.0.1:\(tus.port)/files/", "file": "${export.path}"}}
                 ]}
                """)
        }

        /// The uploads tuspyserver keeps.
        func tusUploads() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: tus.folder.path).filter { $0.count == 32 }
        }
    }

    /// The `stageFinished` outcomes by stage, and the `stageStarted` waits by stage, of `--json` output.
    static func stages(_ stdout: String) -> (outcomes: [String: [String]], after: [String: JSONValue]) {
        var outcomes: [String: [String]] = [:]
        var after: [String: JSONValue] = [:]
        for line in stdout.split(separator: "\n") {
            guard let event = try? JSONValue(parsing: String(line)), let stage = event["stage"]?.stringValue else {
                continue
            }
            switch event["event"]?.stringValue {
            case "stageFinished": outcomes[stage, default: []].append(event["outcome"]?.stringValue ?? "?")
            case "stageStarted": after[stage] = event["after"]
            default: break
            }
        }
        return (outcomes, after)
    }

    @Test func aFailedS3BranchLeavesTheOthersDoneAndTheRerunRunsOnlyIt() async throws {
        let setup = try await Setup()
        let first = try await Binary.run(["run", "wf.json", "--json"], in: setup.scratch.root)
        #expect(first.status == 1, "\(first.stdout)\(first.stderr)")
        let (outcomes, after) = Self.stages(first.stdout)
        #expect(outcomes["export"] == ["succeeded"] && outcomes["s3"] == ["failed"], "\(outcomes)")
        #expect(outcomes["tus"] == ["succeeded"] && outcomes["thumbnail"] == ["succeeded"], "\(outcomes)")
        #expect(after["tus"] == ["export"] && after["s3"] == ["export"] && after["export"] == [])
        #expect(try setup.tusUploads().count == 1, "the tus branch completed")
        let finished = first.stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
            .first { $0["event"] == "itemFinished" }
        #expect(
            finished?["outcome"] == "failed" && finished?["errorKind"] == "not-found", "\(String(describing: finished))"
        )

        let status = try await Binary.run(["status", "wf.json"], in: setup.scratch.root)
        #expect(status.stdout.contains("stages: export → thumbnail ∥ s3 ∥ tus"), "\(status.stdout)")
        let plan = try await Binary.run(["plan", "wf.json", "--var", "bucket=media"], in: setup.scratch.root)
        #expect(plan.stdout.contains("reuse  tus (after export)"), "\(plan.stdout)")
        #expect(plan.stdout.contains("run    s3 (after export): failed last time"), "\(plan.stdout)")

        // The bucket is right now: only the S3 branch runs; the export, thumbnail and tus upload are reused.
        let rerun = try await Binary.run(
            ["run", "wf.json", "--json", "--var", "bucket=media", "--report", "report.json"], in: setup.scratch.root)
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        let again = Self.stages(rerun.stdout).outcomes
        #expect(again["s3"] == ["succeeded"], "\(again)")
        #expect(again["export"] == ["reused"] && again["thumbnail"] == ["reused"] && again["tus"] == ["reused"])
        #expect(runFinished(rerun.stdout)?["stagesRun"] == 1)
        let uploads = try setup.tusUploads()
        #expect(uploads.count == 1, "no second tus upload: \(uploads)")
        let exported = await sha256sum(setup.tus.folder.appendingPathComponent(uploads.first ?? "").path)
        #expect(
            await peerTool("s3_tool.py", [String(setup.s3.port), "sha256", "media", "videos/clip.mp4"]) == exported,
            "the S3 object is the export the tus branch sent")
        let report = try JSONValue(parsing: setup.scratch.read("report.json"))
        let reported = report["items"]?.arrayValue?.first?["stages"]?.arrayValue ?? []
        #expect(reported.first { $0["stage"] == "s3" }?["after"] == ["export"], "\(reported)")
    }

    @Test func theSameBranchesThroughAWorkerOnPostgres() async throws {
        let setup = try await Setup()
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        let worker = try Binary.start(
            ["worker", "--db", url, "--json", "--artifacts", setup.scratch.path("artifacts").path]
                + WorkerTests.workerArguments, in: setup.scratch.root)
        let database = try await BatchDatabase(url: url)
        @Sendable func items(_ status: String) async -> Int {
            let status = try? await BatchQueue(database: database).status().workflows["branches"]?.byStatus[status]
            return status ?? 0
        }
        let submitted = try await Binary.run(["submit", "wf.json", "--db", url], in: setup.scratch.root)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        try await waitUntil("the item failed on the worker", limit: .seconds(120)) { await items("failed") == 1 }
        #expect(try setup.tusUploads().count == 1, "the tus branch completed on the worker")

        let fixed = try await Binary.run(
            ["submit", "wf.json", "--db", url, "--var", "bucket=media"], in: setup.scratch.root)
        #expect(fixed.status == 0, "\(fixed.stdout)\(fixed.stderr)")
        try await waitUntil("the item is done", limit: .seconds(120)) { await items("succeeded") == 1 }
        await database.close()
        worker.signal(SIGTERM)
        #expect(await worker.exit() == 0)
        let outcomes = Self.stages(await worker.stdout.text()).outcomes
        #expect(outcomes["s3"] == ["failed", "succeeded"], "\(outcomes)")
        #expect(outcomes["tus"] == ["succeeded", "reused"] && outcomes["export"] == ["succeeded", "reused"])
        #expect(try setup.tusUploads().count == 1)
        try await server.stop()
    }
}
