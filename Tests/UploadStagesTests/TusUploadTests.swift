import Foundation
import HTTPTransport
import StageKit
import TestSupport
import Testing
import UploadStages

/// `tus.upload` against tuspyserver, a third-party tus 1.0 server.
@Suite struct TusUploadTests {
    private func harness() -> StageHarness {
        StageHarness(
            stateFolder: FileManager.default.temporaryDirectory.appendingPathComponent("tus-\(UUID().uuidString)"))
    }

    /// The bytes tuspyserver stored for an upload URL.
    private func stored(_ server: PeerServer, _ url: JSONValue?) -> String {
        server.folder.appendingPathComponent(String(url?.stringValue?.split(separator: "/").last ?? "")).path
    }

    /// The PATCH body bytes tuspyserver has received so far, cut bodies included (`GET /stats`); 0 while it
    /// does not answer, so a wait asks again.
    private func bytesReceived(_ server: PeerServer) async -> Int {
        let stats = try? JSONValue(parsing: await httpGet("http://127.0.0.1:\(server.port)/stats"))
        return stats?["received"]?.intValue ?? 0
    }

    @Test func uploadsAFileByteForByte() async throws {
        let server = try await PeerServer(script: "tus_server.py")
        let file = try randomFile(bytes: 24 << 20)
        let run = await harness().run(
            TusUploadStage.self,
            options: ["endpoint": .string("http://127.0.0.1:\(server.port)/files/"), "file": .string(file.path)])
        let outputs = try run.outputs.get()
        #expect(outputs["size"] == .int(24 << 20))
        #expect(await sha256sum(stored(server, outputs["url"])) == sha256sum(file.path))
        #expect(run.progress.last?.completed == 24 << 20)
    }

    @Test func uploadsInChunksAndCheckpointsTheOffset() async throws {
        let server = try await PeerServer(script: "tus_server.py")
        let file = try randomFile(bytes: 10 << 20 + 12345, seed: 7)
        let run = await harness().run(
            TusUploadStage.self,
            options: [
                "endpoint": .string("http://127.0.0.1:\(server.port)/files/"), "file": .string(file.path),
                "chunkSize": "4MiB",
                "metadata": ["title": "héllo, world"],
            ])
        let outputs = try run.outputs.get()
        #expect(await sha256sum(stored(server, outputs["url"])) == sha256sum(file.path))
        #expect(run.checkpoint?["offset"] == .int(10 << 20 + 12345))
        #expect(run.checkpoint?["created"] == true)
        let info = try String(contentsOfFile: stored(server, outputs["url"]) + ".info", encoding: .utf8)
        #expect(info.contains("héllo, world") || info.contains("h\\u00e9llo, world"))
    }

    @Test func resumesFromTheServersOffsetAfterAnInterruption() async throws {
        let server = try await PeerServer(script: "tus_server.py")
        let file = try randomFile(bytes: 32 << 20, seed: 9)
        let options: JSONValue = [
            "endpoint": .string("http://127.0.0.1:\(server.port)/files/"), "file": .string(file.path),
            "chunkSize": "2MiB",
        ]
        var services = ServiceValues()
        services[BandwidthLimitKey.self] = BandwidthLimiter(bytesPerSecond: 16 << 20)
        let harness = harness()
        let first = Task { await harness.run(TusUploadStage.self, options: options, services: services) }
        // A quarter of the file: past the 4 MiB checked below, and far enough from the end that the cancel
        // lands in the middle of the upload.
        try await waitUntil("tuspyserver has received 8 MiB of the 32 MiB") {
            await bytesReceived(server) >= 8 << 20
        }
        first.cancel()
        let interrupted = await first.value
        #expect(throws: CancellationError.self) { try interrupted.outputs.get() }
        let checkpoint = try #require(interrupted.checkpoint)
        let sentBefore = interrupted.progress.last?.completed ?? 0
        #expect(sentBefore > 4 << 20 && sentBefore < 32 << 20)

        let resumed = await harness.run(TusUploadStage.self, options: options, checkpoint: checkpoint)
        let outputs = try resumed.outputs.get()
        #expect(outputs["url"] == checkpoint["uploadURL"])
        #expect(await sha256sum(stored(server, outputs["url"])) == sha256sum(file.path))
        // It continued where the server was: at most one chunk was sent again.
        let firstSent = try #require(resumed.progress.first?.completed)
        #expect(firstSent > sentBefore - (2 << 20) - (1 << 20))
    }

    @Test func anUploadSomeoneElseCreatedThatIsGoneIsAClearError() async throws {
        let server = try await PeerServer(script: "tus_server.py")
        let file = try randomFile(bytes: 1000)
        let run = await harness().run(
            TusUploadStage.self,
            options: [
                "url": .string("http://127.0.0.1:\(server.port)/files/0123456789abcdef"), "file": .string(file.path),
            ])
        guard case .failure(let error) = run.outputs else {
            Issue.record("uploaded to a missing upload")
            return
        }
        #expect("\(error)".contains("no longer exists (404)"), "\(error)")
    }

    @Test func aFileChangedSinceTheUploadBeganIsRefused() async throws {
        let server = try await PeerServer(script: "tus_server.py")
        let file = try randomFile(bytes: 5000)
        let resume: JSONValue = [
            "uploadURL": .string("http://127.0.0.1:\(server.port)/files/abc"), "created": false,
            "fingerprint": ["size": 4000, "modified": 1.0], "offset": 2000,
        ]
        let run = await harness().run(
            TusUploadStage.self,
            options: ["url": .string("http://127.0.0.1:\(server.port)/files/abc"), "file": .string(file.path)],
            checkpoint: resume)
        guard case .failure(let error) = run.outputs else {
            Issue.record("resumed with different bytes")
            return
        }
        #expect("\(error)".contains("changed since its upload began"))
    }

    @Test func aServerThatIsNotThereFailsAfterRetries() async throws {
        let file = try randomFile(bytes: 1000)
        let run = await harness().run(
            TusUploadStage.self,
            options: ["endpoint": "http://127.0.0.1:9/files/", "file": .string(file.path)],
            retry: RetryPolicy(attempts: 2, initialDelay: TimeSpan(seconds: 0.1), maxDelay: TimeSpan(seconds: 1)))
        guard case .failure(let error) = run.outputs else {
            Issue.record("uploaded to nothing")
            return
        }
        #expect("\(error)".contains("creating the upload"), "\(error)")
        #expect((error as? HTTPFailure)?.disposition.isRetryable == true)
        // Two attempts under the stage's policy: the first failure is retried once, and reported.
        #expect(run.retries.map(\.attempt) == [1])
    }

    @Test func uploadsInParallelPartsThroughConcatenationAndResumesEachPart() async throws {
        let server = try await PeerServer(script: "tus_server.py")
        let file = try randomFile(bytes: 20 << 20 + 5, seed: 13)
        let options: JSONValue = [
            "endpoint": .string("http://127.0.0.1:\(server.port)/files/"), "file": .string(file.path), "parallel": 4,
            "chunkSize": "1MiB",
        ]
        var services = ServiceValues()
        services[BandwidthLimitKey.self] = BandwidthLimiter(bytesPerSecond: 10 << 20)
        let harness = harness()
        let first = Task { await harness.run(TusUploadStage.self, options: options, services: services) }
        // The parts are checkpointed before their first byte; a quarter of the file in, the cancel lands in
        // the middle of them.
        try await waitUntil("tuspyserver has received 5 MiB of the 20 MiB") {
            await bytesReceived(server) >= 5 << 20
        }
        first.cancel()
        let interrupted = await first.value
        let checkpoint = try #require(interrupted.checkpoint)
        #expect(checkpoint["parts"]?.arrayValue?.count == 4)
        #expect(checkpoint["uploadURL"] == "")

        let resumed = await harness.run(TusUploadStage.self, options: options, checkpoint: checkpoint)
        let outputs = try resumed.outputs.get()
        #expect(outputs["size"] == .int(20 << 20 + 5))
        #expect(await sha256sum(stored(server, outputs["url"])) == sha256sum(file.path))
        // Each part continued from its own offset: far less than the whole file went again.
        let stats = try JSONValue(parsing: await httpGet("http://127.0.0.1:\(server.port)/stats"))
        #expect((stats["received"]?.intValue ?? 0) < (20 << 20) + 4 * (1 << 20) + 5)
    }
}
