import AsyncHTTPClient
import Foundation
import HTTPTransport
import StageKit
import TestSupport
import Testing
import UploadStages

/// The HTTP client stages send through: the one their host gives them in ``StageContext/services``,
/// verifying every server's certificate.
@Suite struct HTTPClientServiceTests {
    private func harness() -> StageHarness {
        StageHarness(
            stateFolder: FileManager.default.temporaryDirectory.appendingPathComponent("client-\(UUID().uuidString)"))
    }

    @Test func aServerWhoseCertificateIsNotTrustedGetsNoRequest() async throws {
        let server = try await PeerServer(script: "tls_server.py")
        let file = try randomFile(bytes: 1 << 20, seed: 5)
        let options: JSONValue = [
            "url": .string("https://127.0.0.1:\(server.port)/upload"), "file": .string(file.path),
        ]
        let client = HTTPClient.makeForStages()
        var services = ServiceValues()
        services[HTTPClientKey.self] = client
        let result = await harness().run(
            HTTPUploadStage.self, options: options, services: services,
            retry: RetryPolicy(attempts: 1, initialDelay: TimeSpan(seconds: 0), maxDelay: TimeSpan(seconds: 0)))
        try await client.shutdown()
        let error = #expect(throws: (any Error).self) { try result.outputs.get() }
        #expect(
            "\(error.map { "\($0)" } ?? "")".localizedCaseInsensitiveContains("certificate"),
            "\(String(describing: error))")
        // The handshake failed, so nothing reached the server; the count is read past its certificate.
        let count = await runTool("/usr/bin/curl", ["-sk", "https://127.0.0.1:\(server.port)/__requests"])
        #expect(count.text == "0")
    }

    @Test func stagesSendThroughTheClientTheirHostGivesThem() async throws {
        let server = try await PeerServer(script: "tls_server.py")
        let file = try randomFile(bytes: 1 << 20, seed: 6)
        let client = HTTPClient.makeForStages()
        try await client.shutdown()
        var services = ServiceValues()
        services[HTTPClientKey.self] = client
        let options: JSONValue = [
            "url": .string("https://127.0.0.1:\(server.port)/upload"), "file": .string(file.path),
        ]
        let result = await harness().run(
            HTTPUploadStage.self, options: options, services: services,
            retry: RetryPolicy(attempts: 1, initialDelay: TimeSpan(seconds: 0), maxDelay: TimeSpan(seconds: 0)))
        // The client given was shut down: the stage used it, and no other.
        let error = #expect(throws: (any Error).self) { try result.outputs.get() }
        #expect(
            "\(error.map { "\($0)" } ?? "")".localizedCaseInsensitiveContains("shut"), "\(String(describing: error))")
    }
}
