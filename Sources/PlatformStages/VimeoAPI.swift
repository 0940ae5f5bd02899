import AsyncHTTPClient
import Foundation
import HTTPTransport
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
public import StageKit

/// Vimeo's REST API (version 3.4) as the vimeo.* stages call it: bearer token, versioned Accept header,
/// JSON in and out, errors mapped to ``PlatformError``. The token never reaches a log line or a state file.
struct VimeoAPI: Sendable {
    /// The API's base URL, e.g. `https://api.vimeo.com`.
    let base: String
    let token: String
    let exchange: HTTPExchange

    /// The `Accept` header asking for API `version`.
    static func accept(version: String) -> String { "application/vnd.vimeo.*+json;version=\(version)" }

    /// An API at `base` called with `token`, through the HTTP client of the stage's `context`.
    init(base: String, token: String, context: StageContext) throws {
        let base = base.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard URL(string: base)?.host != nil else { throw PlatformError(.invalidRequest, "api \(base) is not a URL") }
        guard !token.isEmpty else { throw PlatformError(.notAuthenticated, "the token is empty") }
        self.base = base
        self.token = token
        exchange = HTTPExchange(
            client: context.httpClient, stallTimeout: TimeSpan(seconds: 60), answerTimeout: TimeSpan(seconds: 60))
    }

    /// The absolute URL of an API path (`/me/videos`) or a full URL.
    func url(_ path: String) -> String {
        path.hasPrefix("http://") || path.hasPrefix("https://")
            ? path : base + (path.hasPrefix("/") ? path : "/" + path)
    }

    /// Sends a request (of API `version`, 3.4 unless a legacy request asks for another); returns the answer
    /// when its status is one of `expected`, else a ``PlatformError``.
    func call(
        _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, headers extra: [(String, String)] = [],
        expected: Set<Int> = [200], version: String = "3.4", doing action: String
    ) async throws -> HTTPAnswer {
        var headers = [("Authorization", "bearer \(token)"), ("Accept", Self.accept(version: version))] + extra
        if json != nil { headers.append(("Content-Type", "application/json")) }
        var request = HTTPClientRequest(url: url(path), method: method, headers: headers)
        if let json { request.body = .bytes(ByteBuffer(data: json.serializedData())) }
        let answer = try await exchange.send(request, doing: action)
        guard expected.contains(Int(answer.status.code)) else { throw HTTPFailure.platform(answer, doing: action) }
        return answer
    }

    /// Like ``call(_:_:json:headers:expected:version:doing:)``, and parses the body as a JSON object.
    func object(
        _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, headers: [(String, String)] = [],
        expected: Set<Int> = [200], version: String = "3.4", doing action: String
    ) async throws -> JSONValue {
        try Self.object(
            in: await call(
                method, path, json: json, headers: headers, expected: expected, version: version, doing: action),
            doing: action)
    }

    /// The JSON object an answer carries, or a ``PlatformError`` when it carries none.
    static func object(in answer: HTTPAnswer, doing action: String) throws -> JSONValue {
        guard let value = try? JSONValue(parsing: Data(buffer: answer.body)), case .object = value else {
            throw PlatformError(.invalidResponse, "\(action): the answer is not a JSON object: \(answer.bodyExcerpt)")
        }
        return value
    }
}

extension JSONValue {
    /// The value at a dotted path (`upload.upload_link`), or a ``PlatformError`` naming the missing field.
    func required(_ path: String, in action: String) throws -> JSONValue {
        var value = self
        for key in path.split(separator: ".") {
            guard let next = value[String(key)], next != .null else {
                throw PlatformError(.invalidResponse, "\(action): the answer has no \(path)")
            }
            value = next
        }
        return value
    }

    /// The string at a dotted path, or a ``PlatformError`` naming the missing field.
    func requiredString(_ path: String, in action: String) throws -> String {
        guard let text = try required(path, in: action).stringValue, !text.isEmpty else {
            throw PlatformError(.invalidResponse, "\(action): \(path) is not a string")
        }
        return text
    }

    /// The value at a dotted path, if present.
    func at(_ path: String) -> JSONValue? {
        var value: JSONValue? = self
        for key in path.split(separator: ".") { value = value?[String(key)] }
        return value == .null ? nil : value
    }
}

/// How every vimeo.* stage reaches the API: its base URL and the bearer token.
public struct VimeoConnection: StageOptions {
    /// The API's base URL (the Sandbox's for local runs).
    @Option("The API's base URL (the Sandbox's for local runs).") public var api = "https://api.vimeo.com"
    /// Bearer token; use ${env.…} so it stays secret.
    @Option("Bearer token; use ${env.…} so it stays secret.") public var token: String

    public init() {}

    /// The API at the base URL, with the token.
    func connect(context: StageContext) throws -> VimeoAPI {
        try VimeoAPI(base: api, token: token, context: context)
    }
}

/// Polls until `done` says the value is final, at most `timeout`, `interval` apart.
func poll(
    every interval: TimeSpan, for timeout: TimeSpan, what: String, _ check: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout.duration
    while true {
        if try await check() { return }
        guard ContinuousClock.now + interval.duration < deadline else {
            throw PlatformError(.serverFailure, "\(what) did not happen within \(timeout)")
        }
        try await Task.sleep(for: interval.duration)
    }
}
