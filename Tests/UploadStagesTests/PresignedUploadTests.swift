import Foundation
import HTTPTransport
import StageKit
import TestSupport
import Testing
import UploadStages

/// `presigned.upload` through a signing backend in front of moto's S3 server.
@Suite struct PresignedUploadTests {
    private func options(_ backend: PeerServer, _ file: URL, token: String = "backend-secret") -> JSONValue {
        let base = "http://127.0.0.1:\(backend.port)/uploads"
        return [
            "create": .string(base), "signPart": .string("\(base)/{uploadId}/{partNumber}?key={key}"),
            "listParts": .string("\(base)/{uploadId}?key={key}"),
            "complete": .string("\(base)/{uploadId}/complete?key={key}"),
            "abort": .string("\(base)/{uploadId}?key={key}"), "file": .string(file.path),
            "headers": ["Authorization": .string("Bearer \(token)")], "concurrency": 3,
        ]
    }

    /// The PUT body bytes moto has received so far, cut bodies included (`GET /__stats`); 0 while it does
    /// not answer, so a wait asks again.
    private func bytesReceived(_ storage: PeerServer) async -> Int {
        let stats = try? JSONValue(parsing: await httpGet("http://127.0.0.1:\(storage.port)/__stats"))
        return stats?["received"]?.intValue ?? 0
    }

    @Test func uploadsThroughSignedPartURLsAndResumes() async throws {
        let storage = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let backend = try await PeerServer(script: "presign_backend.py", arguments: [String(storage.port), "media"])
        let file = try randomFile(bytes: 23 << 20, seed: 21)
        let harness = StageHarness(
            stateFolder: FileManager.default.temporaryDirectory.appendingPathComponent("presigned-\(UUID().uuidString)")
        )
        var services = ServiceValues()
        services[BandwidthLimitKey.self] = BandwidthLimiter(bytesPerSecond: 8 << 20)
        let first = Task {
            await harness.run(PresignedUploadStage.self, options: options(backend, file), services: services)
        }
        // Three 5 MiB parts go at once; when one comes back the stage starts the fourth, then checkpoints the
        // finished one (a cancel does not stop that) before it waits again: a byte of the fourth part means
        // a part is checkpointed, and two are still to finish.
        try await waitUntil("moto has received bytes of the fourth part") {
            await bytesReceived(storage) > 3 * (5 << 20)
        }
        first.cancel()
        let interrupted = await first.value
        let checkpoint = try #require(interrupted.checkpoint)
        #expect((checkpoint["parts"]?.arrayValue?.count ?? 0) >= 1)

        let run = await harness.run(PresignedUploadStage.self, options: options(backend, file), checkpoint: checkpoint)
        let outputs = try run.outputs.get()
        #expect(outputs["parts"] == 5)
        #expect(outputs["uploadId"] == checkpoint["uploadId"])
        let key = try #require(outputs["key"]?.stringValue)
        #expect(await peerTool("s3_tool.py", [String(storage.port), "sha256", "media", key]) == sha256sum(file.path))
        #expect(await peerTool("s3_tool.py", [String(storage.port), "uploads", "media"]) == "0")
    }

    @Test func aRefusingBackendIsAFatalErrorThatNamesTheStep() async throws {
        let storage = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let backend = try await PeerServer(script: "presign_backend.py", arguments: [String(storage.port), "media"])
        let file = try randomFile(bytes: 1000)
        let harness = StageHarness(
            stateFolder: FileManager.default.temporaryDirectory.appendingPathComponent("presigned-\(UUID().uuidString)")
        )
        let run = await harness.run(PresignedUploadStage.self, options: options(backend, file, token: "wrong"))
        guard case .failure(let error) = run.outputs else {
            Issue.record("uploaded with a wrong token")
            return
        }
        #expect("\(error)".contains("creating the upload: the server answered 401"), "\(error)")
        #expect((error as? HTTPFailure)?.disposition.isRetryable == false)
    }
}
