import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import StageKit

@testable import Sandbox

/// A response as the tests look at it.
struct HTTPResult: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    func header(_ name: String) -> String? {
        self.headers[name].first
    }

    var json: JSONValue? {
        JSONValue.parse(self.body)
    }

    var text: String {
        String(decoding: self.body, as: UTF8.self)
    }
}

/// Drives a running sandbox over real HTTP with `HTTPClient.shared`.
struct SandboxClient: Sendable {
    let baseURL: String
    var token: String? = "sandbox-token"

    init(_ sandbox: RunningSandbox, token: String? = "sandbox-token") {
        self.baseURL = sandbox.baseURL
        self.token = token
    }

    /// Sends a request to `path` (relative to the base URL, or absolute).
    func send(
        _ method: HTTPMethod,
        _ path: String,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        auth: Bool = true
    ) async throws -> HTTPResult {
        let url = path.hasPrefix("http") ? path : self.baseURL + path
        var request = HTTPClientRequest(url: url)
        request.method = method
        if auth, let token = self.token {
            request.headers.add(name: "Authorization", value: "bearer \(token)")
        }
        for (name, value) in headers {
            request.headers.add(name: name, value: value)
        }
        if let body {
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let collected = try await response.body.collect(upTo: 64 << 20)
        return HTTPResult(
            status: Int(response.status.code),
            headers: response.headers,
            body: Array(collected.readableBytesView)
        )
    }

    /// `POST /oauth/token` with the client credentials `sandbox-client:<secret>`, without a bearer token.
    func requestToken(secret: String) async throws -> HTTPResult {
        try await send(
            .POST, "/oauth/token",
            headers: [
                ("Authorization", "Basic " + Array("sandbox-client:\(secret)".utf8).base64),
                ("Content-Type", "application/json"),
            ],
            body: Array(#"{"grant_type":"client_credentials"}"#.utf8), auth: false)
    }

    /// Sends a JSON body.
    func send(
        _ method: HTTPMethod,
        _ path: String,
        json: JSONValue,
        headers: [(String, String)] = [],
        version: String = "3.4"
    ) async throws -> HTTPResult {
        try await self.send(
            method,
            path,
            headers: headers + [
                ("Content-Type", "application/json"), ("Accept", "application/vnd.vimeo.*+json;version=\(version)"),
            ],
            body: json.encoded()
        )
    }

    /// `POST /me/videos`, returning the video JSON.
    func createVideo(approach: String, size: Int, idempotencyKey: String? = nil) async throws -> HTTPResult {
        try await self.send(
            .POST,
            "/me/videos",
            json: ["upload": ["approach": .string(approach), "size": .integer(Int64(size))], "name": "clip"],
            headers: idempotencyKey.map { [("Idempotency-Key", $0)] } ?? []
        )
    }

    /// A tus `PATCH` of `bytes` at `offset`.
    func tusPatch(_ link: String, offset: Int, bytes: ArraySlice<UInt8>, checksum: String? = nil) async throws
        -> HTTPResult
    {
        var headers = [
            ("Tus-Resumable", "1.0.0"),
            ("Upload-Offset", String(offset)),
            ("Content-Type", "application/offset+octet-stream"),
        ]
        if let checksum {
            headers.append(("Upload-Checksum", checksum))
        }
        return try await self.send(.PATCH, link, headers: headers, body: Array(bytes), auth: false)
    }

    /// The offset a tus `HEAD` reports.
    func tusOffset(_ link: String) async throws -> Int? {
        let result = try await self.send(.HEAD, link, headers: [("Tus-Resumable", "1.0.0")], auth: false)
        return result.header("Upload-Offset").flatMap { Int($0) }
    }

    /// The SHA-256 the sandbox computes over a video's (or upload's) stored bytes.
    func storedSHA256(video id: String) async throws -> String {
        try await self.send(.GET, "/sandbox/videos/\(id)/sha256", auth: false).text
    }
}

/// Test data and digests.
enum Fixture {
    /// Deterministic pseudo-random bytes.
    static func bytes(_ count: Int, seed: UInt64 = 42) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            var word = generator.next()
            for _ in 0..<8 where index < count {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return bytes
    }

    static func sha256Hex(_ bytes: some Collection<UInt8>) -> String {
        SHA256.hash(data: Array(bytes)).map { String(format: "%02x", $0) }.joined()
    }

    static func sha1Base64(_ bytes: some Collection<UInt8>) -> String {
        Data(Insecure.SHA1.hash(data: Array(bytes))).base64EncodedString()
    }

    /// The video id of a video JSON (`/videos/ID`).
    static func videoID(_ video: JSONValue?) -> String {
        String(video?["uri"]?.stringValue?.split(separator: "/").last ?? "")
    }

    /// A fresh folder under the temporary directory.
    static func temporaryFolder() -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("sandbox-test-" + UUID().uuidString).path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Starts a sandbox for the duration of `body` and always stops it.
func withSandbox(
    _ configuration: SandboxConfiguration = SandboxConfiguration(transcodeDelay: .milliseconds(200)),
    _ body: (RunningSandbox, SandboxClient) async throws -> Void
) async throws {
    let sandbox = try await SandboxServer.start(configuration)
    do {
        try await body(sandbox, SandboxClient(sandbox))
    } catch {
        await sandbox.stop()
        throw error
    }
    await sandbox.stop()
}
