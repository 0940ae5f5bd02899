import Foundation
import Sandbox
import StageKit
import TestSupport
import Testing
import UploadStages

/// `tus.upload` against the Sandbox's tus server, which offers the checksum extension and refuses (460) a
/// PATCH whose bytes do not match its `Upload-Checksum`.
@Suite struct TusChecksumTests {
    /// Ten PATCHes, each with the digest computed while the one before was sent: one digest of the wrong
    /// bytes would be refused, and with a single attempt the upload would fail.
    @Test(arguments: ["auto", "sha256", "md5"])
    func everyPatchCarriesTheDigestOfItsOwnBytes(checksum: String) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tus-sum-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let sandbox = try await SandboxServer.start(
            SandboxConfiguration(dataFolder: folder.appendingPathComponent("sandbox").path))
        let file = try randomFile(bytes: 9 << 20 + 12345, seed: 11)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = await StageHarness(stateFolder: folder.appendingPathComponent("state")).run(
            TusUploadStage.self,
            options: [
                "endpoint": .string("\(sandbox.baseURL)/upload"), "file": .string(file.path),
                "chunkSize": "1MiB", "checksum": .string(checksum),
            ],
            retry: RetryPolicy(attempts: 1, initialDelay: TimeSpan(seconds: 0), maxDelay: TimeSpan(seconds: 0)))
        let outputs = try run.outputs.get()
        let id = outputs["url"]?.stringValue?.split(separator: "/").last.map(String.init) ?? ""
        let stored = await httpGet("\(sandbox.baseURL)/sandbox/uploads/\(id)/sha256")
        await sandbox.stop()
        #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == (await sha256sum(file.path)))
        #expect(run.retries.isEmpty)
    }
}
