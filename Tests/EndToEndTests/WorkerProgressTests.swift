import Foundation
import PipelineKit
import SharedBatch
import StageKit
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A shared batch's workers publish their running stages' progress in the database: the dashboard's status shows a
/// worker's transcode moving as it shows a local run's, with the worker that runs it, and nothing once it ended.
@Suite(.serialized) struct WorkerProgressTests {
    @Test func theDashboardShowsAWorkersRunningStageProgress() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=20", "-c:v", "libx264",
                "-preset", "ultrafast", scratch.path("in/clip.mp4").path,
            ])
        #expect(made.status == 0, "\(made.stderr)")
        // One thread at x264's slow preset: about 5 s of encoding, long enough to see its progress published (at
        // most once a second) more than once.
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "progress", "inputs": {"path": "in"}, "stages": [
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "\(scratch.path("out").path)/${input.stem}.mp4",
               "segmentSeconds": 0, "video": {"preset": "slow", "crf": 23}, "threads": 1}}
            ]}
            """)
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        let submitted = try await Binary.run(
            ["submit", "wf.json", "--db", url], in: scratch.root)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        let worker = try Binary.start(["worker", "--db", url] + WorkerTests.workerArguments, in: scratch.root)
        defer { if worker.isRunning { worker.signal(SIGKILL) } }
        let served = try await ServedDashboard.start(["--db", url], in: scratch.root)
        defer { served.process.signal(SIGKILL) }

        // The worker's row alone is read, on the test's own connection, every 150 ms; the dashboard is asked once
        // it shows what is awaited.
        let database = try await BatchDatabase(url: url)
        let queue = BatchQueue(database: database)
        let seen = Mutex<[Int]>([])
        try await waitUntil("the worker publishes its transcode advancing", every: .milliseconds(150)) {
            guard let completed = try await Self.completed(in: server, url: url), completed > 0 else { return false }
            return seen.withLock { seen in
                if seen.last != completed { seen.append(completed) }
                return seen.count >= 2
            }
        }
        // The worker waits while the dashboard is asked, so its transcode cannot end first on a fast machine; its
        // row keeps the progress it last published.
        worker.signal(SIGSTOP)
        let status: JSONValue
        do {
            defer { worker.signal(SIGCONT) }
            status = try await served.request("/api/status").1
        }
        let stage = try #require(status["progress"]?.arrayValue?.first, "\(status)")
        #expect(
            stage["workflow"] == "progress" && stage["item"] == "clip.mp4" && stage["stage"] == "export", "\(stage)")
        #expect((stage["completed"]?.intValue ?? 0) > 0 && stage["total"]?.intValue != nil, "\(stage)")
        #expect(stage["unit"] == "seconds" && stage["reportedAt"]?.stringValue != nil, "\(stage)")
        #expect(stage["worker"] != nil && stage["worker"] == status["workers"]?.arrayValue?.first?["id"], "\(status)")

        try await waitUntil(
            "the item is done and its stage gone from the worker's row", limit: .seconds(300),
            every: .milliseconds(150)
        ) {
            let batch = try await queue.status(listingFailed: false)
            return batch.workflows["progress"]?.byStatus["succeeded"] == 1 && batch.workers.first?.running == []
        }
        let (_, after) = try await served.request("/api/status")
        #expect(after["progress"] == [], "\(after)")
        await database.close()
        worker.signal(SIGTERM)
        #expect(await worker.exit() == 0)
        try await server.stop()
    }

    /// How far the first stage the worker's row holds has come, read from that row alone; nil while it holds none.
    private static func completed(in server: PostgresServer, url: String) async throws -> Int? {
        let name = URL(string: url)?.lastPathComponent ?? ""
        let progress = try await server.psql(
            "SELECT coalesce(progress->0->>'completed', '') FROM workers LIMIT 1", database: name)
        return Int(progress)
    }
}
