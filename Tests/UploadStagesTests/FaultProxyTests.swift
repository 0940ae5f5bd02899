import Foundation
import StageKit
import TestSupport
import Testing
import UploadStages

/// `tus.upload` and `s3.upload` through `fault_proxy.py`, a proxy between the stage and a real server
/// (tuspyserver, moto) that answers 500/503/429 itself, resets connections in the middle of a body and
/// stalls them. Its faults follow a seed and a request counter, so a run's fault sequence repeats.
///
/// The proxy only stalls a body when at least `--stall-headroom` bytes (the machine's largest TCP send
/// buffer + 4 MiB: 8 MiB on Linux's defaults) are still to come: the client's socket buffer and HTTP library
/// swallow the last few MiB of a body, and a client that has handed over its whole body waits for an
/// answer (a 120 s or 300 s deadline), which no stall timeout covers. So the 2 MiB chunks and 5 MiB parts of
/// the first two tests are never stalled, and the stall tests use 16 MiB requests.
@Suite struct FaultProxyTests {
    /// Twenty consecutive failures without progress before an upload gives up.
    private let retry = RetryPolicy(attempts: 20, initialDelay: TimeSpan(seconds: 0.5), maxDelay: TimeSpan(seconds: 20))

    private func harness() -> StageHarness {
        StageHarness(
            stateFolder: FileManager.default.temporaryDirectory.appendingPathComponent("faults-\(UUID().uuidString)"))
    }

    /// Starts the proxy in front of `server`. A stalled connection is held for 60 s, far longer than
    /// `stallTimeout`, so an upload that waited for the proxy's reset instead of noticing a stall itself shows
    /// in the proxy's counts: that stall is not among the abandoned ones.
    private func startProxy(
        to server: PeerServer, seed: Int, errorRate: Double = 0, resetRate: Double = 0, stallRate: Double = 0
    ) async throws -> PeerServer {
        try await PeerServer(
            script: "fault_proxy.py",
            arguments: [
                String(server.port), "--seed", String(seed), "--error-rate", String(errorRate), "--reset-rate",
                String(resetRate),
                "--stall-rate", String(stallRate), "--stall-seconds", "60",
            ])
    }

    /// The proxy's counts: requests, errors, resets, stalls, and the stalls the client abandoned itself (it
    /// asked for the same URL again while the proxy still held the stalled request).
    private func stats(_ proxy: PeerServer) async throws -> [String: Int] {
        let value = try JSONValue(parsing: await httpGet("http://127.0.0.1:\(proxy.port)/__proxy_stats"))
        return (value.objectValue ?? [:]).compactMapValues(\.intValue)
    }

    private func faults(_ stats: [String: Int]) -> Int {
        stats["errors", default: 0] + stats["resets", default: 0] + stats["stalls", default: 0]
    }

    /// The bytes tuspyserver stored for an upload URL.
    private func stored(_ server: PeerServer, _ url: JSONValue?) -> String {
        server.folder.appendingPathComponent(String(url?.stringValue?.split(separator: "/").last ?? "")).path
    }

    private func tusOptions(_ proxy: PeerServer, _ file: URL, chunkSize: String) -> JSONValue {
        [
            "endpoint": .string("http://127.0.0.1:\(proxy.port)/files/"), "file": .string(file.path),
            "chunkSize": .string(chunkSize),
            "stallTimeout": "2s",
        ]
    }

    private func s3Options(_ proxy: PeerServer, _ file: URL, key: String, partSize: String) -> JSONValue {
        [
            "endpoint": .string("http://127.0.0.1:\(proxy.port)"), "bucket": "media", "key": .string(key),
            "file": .string(file.path),
            "partSize": .string(partSize), "concurrency": 2, "stallTimeout": "2s",
            "accessKeyId": "test", "secretAccessKey": "test",
        ]
    }

    @Test(.timeLimit(.minutes(2)))
    func tusUploadSurvivesErrorsAndResets() async throws {
        let server = try await PeerServer(script: "tus_server.py")
        let proxy = try await startProxy(to: server, seed: 1, errorRate: 0.2, resetRate: 0.1, stallRate: 0.05)
        let file = try randomFile(bytes: 24 << 20, seed: 21)
        let run = await harness().run(
            TusUploadStage.self, options: tusOptions(proxy, file, chunkSize: "2MiB"), retry: retry)
        let outputs = try run.outputs.get()
        #expect(outputs["size"] == .int(24 << 20))
        #expect(outputs["url"]?.stringValue?.hasPrefix("http://127.0.0.1:\(proxy.port)/files/") == true)
        #expect(await sha256sum(stored(server, outputs["url"])) == sha256sum(file.path))
        let counts = try await stats(proxy)
        #expect(faults(counts) > 0, "the proxy injected no fault: \(counts)")
    }

    @Test(.timeLimit(.minutes(2)))
    func s3UploadSurvivesErrorsAndResets() async throws {
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let proxy = try await startProxy(to: server, seed: 1, errorRate: 0.2, resetRate: 0.1, stallRate: 0.05)
        let file = try randomFile(bytes: 30 << 20, seed: 23)
        let run = await harness().run(
            S3UploadStage.self, options: s3Options(proxy, file, key: "faults/clip.bin", partSize: "5MiB"), retry: retry)
        _ = try run.outputs.get()
        #expect(
            await peerTool("s3_tool.py", [String(server.port), "sha256", "media", "faults/clip.bin"])
                == sha256sum(file.path))
        #expect(await peerTool("s3_tool.py", [String(server.port), "uploads", "media"]) == "0")
        let counts = try await stats(proxy)
        #expect(faults(counts) > 0, "the proxy injected no fault: \(counts)")
    }

    /// Every stall must be caught by `stallTimeout` (2 s), not outlasted: the stage gives up on the stalled
    /// PATCH itself and asks the server for its offset (HEAD of the same URL) while the proxy still holds
    /// the PATCH, then resumes from there. (Seed 6 stalls three of the PATCHes.)
    @Test(.timeLimit(.minutes(2)))
    func tusUploadDetectsStallsAndResumes() async throws {
        let server = try await PeerServer(script: "tus_server.py")
        let proxy = try await startProxy(to: server, seed: 6, stallRate: 0.5)
        let file = try randomFile(bytes: 40 << 20, seed: 22)
        let run = await harness().run(
            TusUploadStage.self, options: tusOptions(proxy, file, chunkSize: "16MiB"), retry: retry)
        let outputs = try run.outputs.get()
        #expect(await sha256sum(stored(server, outputs["url"])) == sha256sum(file.path))
        let counts = try await stats(proxy)
        #expect(counts["stalls", default: 0] > 0, "the proxy stalled nothing: \(counts)")
        #expect(counts["abandoned"] == counts["stalls"], "a stall outlasted stallTimeout: \(counts)")
    }

    /// The same for S3: a stalled part is abandoned after `stallTimeout` and sent again (to the same URL)
    /// while the proxy still holds it. (Seed 1 stalls both parts of the first round, whichever order they
    /// arrive in.)
    @Test(.timeLimit(.minutes(2)))
    func s3UploadDetectsStallsAndResumes() async throws {
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let proxy = try await startProxy(to: server, seed: 1, stallRate: 0.4)
        let file = try randomFile(bytes: 32 << 20, seed: 24)
        let run = await harness().run(
            S3UploadStage.self, options: s3Options(proxy, file, key: "stalls.bin", partSize: "16MiB"), retry: retry)
        _ = try run.outputs.get()
        #expect(
            await peerTool("s3_tool.py", [String(server.port), "sha256", "media", "stalls.bin"]) == sha256sum(file.path)
        )
        #expect(await peerTool("s3_tool.py", [String(server.port), "uploads", "media"]) == "0")
        let counts = try await stats(proxy)
        #expect(counts["stalls", default: 0] > 0, "the proxy stalled nothing: \(counts)")
        #expect(counts["abandoned"] == counts["stalls"], "a stall outlasted stallTimeout: \(counts)")
    }
}
