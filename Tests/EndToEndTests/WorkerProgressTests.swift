import Foundation
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
        // One thread at x264's slow preset: long enough to see its progress published more than once.
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "progress", "inputs": {"path": "in"}, "stages": [
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "\(scratch.path("out").path)/${input.stem}.mp4",
               "segmentSeconds": 0, "video": {"preset": "slow", "crf": 23}, "threads": 1}}
            ]}
            """)
        let server = try await PostgresServer.start()
        defer { Task { try? await server.stop() } }
        let url = try await server.createDatabase()
        let submitted = try await Binary.run(
            ["submit", "wf.json", "--db", url], in: scratch.root)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        let worker = try Binary.start(["worker", "--db", url] + WorkerTests.workerArguments, in: scratch.root)
        defer { if worker.isRunning { worker.signal(SIGKILL) } }
        let served = try await ServedDashboard.start(["--db", url], in: scratch.root)
        defer { served.process.signal(SIGKILL) }

        let seen = Mutex<[Int]>([])
        try await waitUntil("the status shows the worker's transcode advance") {
            let (_, status) = try await served.request("/api/status")
            guard let stage = status["progress"]?.arrayValue?.first,
                stage["workflow"] == "progress", stage["item"] == "clip.mp4", stage["stage"] == "export",
                let completed = stage["completed"]?.intValue, completed > 0, stage["total"]?.intValue != nil,
                let worker = stage["worker"]?.stringValue,
                status["workers"]?.arrayValue?.first?["id"]?.stringValue == worker
            else { return false }
            return seen.withLock { seen in
                if seen.last != completed { seen.append(completed) }
                return seen.count >= 2
            }
        }
        try await waitUntil("the item is done and its ended stage gone from the status", limit: .seconds(300)) {
            let (_, status) = try await served.request("/api/status")
            return status["workflows"]?.arrayValue?.first?["counts"]?["done"] == 1
                && status["progress"]?.arrayValue?.isEmpty == true
        }
        worker.signal(SIGTERM)
        #expect(await worker.exit() == 0)
    }
}
