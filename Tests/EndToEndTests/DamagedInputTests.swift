import Foundation
import SharedBatch
import StageKit
import TestSupport
import Testing

/// Damaged media in a shared batch: `submit` records the item of a file named as media that FFmpeg cannot read as
/// failed (`damaged-input`, in `status --failed`) instead of queuing it, ends with exit code 1, and the workers take
/// up the other files only.
@Suite struct DamagedInputTests {
    @Test func submitFailsADamagedFileAndQueuesTheRest() async throws {
        let scratch = try Scratch()
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: repositoryRoot.appendingPathComponent("samples/clip-h264-aac.mp4"), to: scratch.path("in/good.mp4"))
        try scratch.write("in/bad.mp4", "not a video at all\n")
        try scratch.write(
            "wf.json",
            #"{"version": 1, "name": "damaged", "inputs": {"path": "in"}, "stages": [{"id": "probe", "uses": "ffmpeg.probe"}]}"#
        )
        let submitted = try await Binary.run(["submit", "wf.json", "--db", url], in: scratch.root)
        #expect(submitted.status == 1, "\(submitted.stdout)\(submitted.stderr)")
        #expect(submitted.stdout.contains("queued 1 item") && submitted.stdout.contains("1 failed as damaged"))

        let database = try await BatchDatabase(url: url)
        @Sendable func items(_ status: String) async -> Int {
            let status = try? await BatchQueue(database: database).status().workflows["damaged"]?.byStatus[status]
            return status ?? 0
        }
        let worker = try Binary.start(["worker", "--db", url] + WorkerTests.workerArguments, in: scratch.root)
        try await waitUntil("the good file is done", limit: .seconds(120)) { await items("succeeded") == 1 }
        await database.close()
        worker.signal(SIGTERM)
        #expect(await worker.exit() == 0)

        let failed = try await Binary.run(["status", "--db", url, "--failed"], in: scratch.root)
        #expect(failed.stdout.contains("bad.mp4") && !failed.stdout.contains("good.mp4"), "\(failed.stdout)")
        #expect(failed.stdout.contains("damaged-input"), "\(failed.stdout)")
        try await server.stop()
    }
}
