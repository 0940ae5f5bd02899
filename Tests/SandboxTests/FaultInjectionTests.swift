import NIOHTTP1
import StageKit
import Testing

@testable import Sandbox

@Suite("fault injection")
struct FaultInjectionTests {
    /// Retries a request on 5xx and 429, as any well-behaved client does.
    static func retrying(
        _ attempt: () async throws -> HTTPResult
    ) async throws -> (result: HTTPResult, failures: Int) {
        var failures = 0
        for _ in 0..<40 {
            let result = try await attempt()
            if result.status >= 500 || result.status == 429 {
                failures += 1
                continue
            }
            return (result, failures)
        }
        Issue.record("no success after 40 attempts")
        return (try await attempt(), failures)
    }

    @Test("with errorRate 0.3 a client that retries on 5xx and 429 eventually succeeds")
    func errorRate() async throws {
        let configuration = SandboxConfiguration(faults: SandboxFaults(errorRate: 0.3, seed: 7))
        try await withSandbox(configuration) { _, client in
            let file = Fixture.bytes(6 * 256 * 1024, seed: 5)
            var failures = 0
            let (created, createFailures) = try await Self.retrying {
                try await client.createVideo(approach: "tus", size: file.count, idempotencyKey: "retry-1")
            }
            failures += createFailures
            #expect(created.status == 200)
            let link = try #require(created.json?.value(at: "upload.upload_link")?.stringValue)
            let id = Fixture.videoID(created.json)

            var offset = 0
            while offset < file.count {
                let chunk = file[offset..<min(file.count, offset + 256 * 1024)]
                let (patched, patchFailures) = try await Self.retrying {
                    try await client.tusPatch(link, offset: offset, bytes: chunk)
                }
                failures += patchFailures
                #expect(patched.status == 204)
                offset = Int(patched.header("Upload-Offset") ?? "") ?? offset
            }
            #expect(failures > 0, "an error rate of 0.3 injects some errors")
            let stats = try await client.send(.GET, "/sandbox/stats", auth: false).json
            #expect(stats?["injectedErrors"]?.integerValue == Int64(failures))
            #expect(stats?["videos"]?.integerValue == 1)
            #expect(try await client.storedSHA256(video: id) == Fixture.sha256Hex(file))
        }
    }

    @Test("dropAfterBytes cuts a PATCH; HEAD then reports the bytes that arrived and the upload resumes")
    func dropAfterBytes() async throws {
        try await withSandbox { _, client in
            let file = Fixture.bytes(1 << 20, seed: 11)
            let video = try #require(try await client.createVideo(approach: "tus", size: file.count).json)
            let link = try #require(video.value(at: "upload.upload_link")?.stringValue)

            let faults = try await client.send(
                .POST, "/sandbox/faults", json: ["dropAfterBytes": 300_000, "dropRate": 1])
            #expect(faults.status == 200)
            #expect(faults.json?["dropAfterBytes"]?.integerValue == 300_000)

            await #expect(throws: (any Error).self) {
                let result = try await client.tusPatch(link, offset: 0, bytes: file[...])
                Issue.record("the cut PATCH was answered \(result.status)")
            }

            #expect(try await client.send(.POST, "/sandbox/faults", json: [:]).status == 200)
            let offset = try #require(try await client.tusOffset(link))
            #expect(offset == 300_000)

            let rest = try await client.tusPatch(link, offset: offset, bytes: file[offset...])
            #expect(rest.status == 204)
            #expect(try await client.storedSHA256(video: Fixture.videoID(video)) == Fixture.sha256Hex(file))
            let stats = try await client.send(.GET, "/sandbox/stats", auth: false).json
            #expect(stats?["droppedConnections"]?.integerValue == 1)
            #expect((stats?["bytesReceived"]?.integerValue ?? 0) >= Int64(file.count))
        }
    }

    @Test("latency delays answers")
    func latency() async throws {
        let configuration = SandboxConfiguration(faults: SandboxFaults(latency: 0.3))
        try await withSandbox(configuration) { _, client in
            let clock = ContinuousClock()
            let start = clock.now
            let status = try await client.send(.GET, "/me").status
            let elapsed = clock.now - start
            #expect(status == 200)
            #expect(elapsed >= .milliseconds(300))
        }
    }
}
