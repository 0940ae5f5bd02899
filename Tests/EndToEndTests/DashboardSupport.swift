import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import StageKit
import TestSupport

/// Headless Chromium driven through `Fixtures/browser.py` (the DevTools protocol on a pipe): one JSON command per
/// line, one answer per line.
final class BrowserSession: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = NIOLockedValueBox(Data())
    private var sent = 0

    init() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", repositoryRoot.appendingPathComponent("Tests/EndToEndTests/Fixtures/browser.py").path,
        ]
        let stdout = Pipe()
        process.standardInput = input
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = stdout.fileHandleForReading
        Thread.detachNewThread { [output] in
            while case let chunk = handle.availableData, !chunk.isEmpty {
                output.withLockedValue { $0.append(chunk) }
            }
        }
    }

    /// Sends `command` and returns the value of its answer; a command the browser could not do throws.
    @discardableResult
    func send(_ command: JSONValue) async throws -> JSONValue {
        sent += 1
        let number = sent
        input.fileHandleForWriting.write(Data((command.serialized() + "\n").utf8))
        let output = self.output
        let line = NIOLockedValueBox("")
        try await waitUntil("the browser's answer to \(command.serialized())") {
            let lines = output.withLockedValue { String(decoding: $0, as: UTF8.self) }.split(separator: "\n")
            guard lines.count >= number else { return false }
            line.withLockedValue { $0 = String(lines[number - 1]) }
            return true
        }
        let text = line.withLockedValue { $0 }
        let answer = try JSONValue(parsing: text)
        guard answer["ok"] == true else { throw BrowserError(message: answer["error"]?.stringValue ?? text) }
        return answer["value"] ?? .null
    }

    func navigate(_ url: String) async throws { try await send(["navigate": .string(url)]) }
    @discardableResult
    func eval(_ expression: String) async throws -> JSONValue { try await send(["eval": .string(expression)]) }
    func waitFor(_ expression: String) async throws { try await send(["waitFor": .string(expression), "limit": 120]) }
    func screenshot(_ path: URL) async throws { try await send(["screenshot": .string(path.path)]) }

    /// Closes the browser.
    func close() {
        try? input.fileHandleForWriting.close()
        _ = waitForExit(of: process)
    }
}

struct BrowserError: Error, CustomStringConvertible {
    var message: String
    var description: String { "browser: \(message)" }
}

/// `pipeline serve` started by a test, with the port it printed.
struct ServedDashboard {
    let process: RunningBinary
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    /// Starts `pipeline serve` with `arguments` on `port` (0: one the system picks).
    static func start(_ arguments: [String], in folder: URL, environment: [String: String] = [:], port: Int = 0)
        async throws -> ServedDashboard
    {
        let process = try Binary.start(
            ["serve", "--port", String(port)] + arguments, in: folder, environment: environment)
        let printed = NIOLockedValueBox(0)
        try await waitUntil("pipeline serve printed its address") {
            let text = process.stdout.soFar
            guard let range = text.range(of: "http://127.0.0.1:") else { return !process.isRunning }
            let port = Int(text[range.upperBound...].prefix { $0.isNumber }) ?? 0
            printed.withLockedValue { $0 = port }
            return port > 0
        }
        let port = printed.withLockedValue { $0 }
        guard port > 0 else { throw BrowserError(message: "serve ended: \(await process.stderr.text())") }
        return ServedDashboard(process: process, port: port)
    }

    /// GET or POST `path`, with `headers` (`Name: value`) besides the bearer token: the status and the JSON
    /// answered.
    func request(_ path: String, method: String = "GET", bearer: String? = nil, headers: [String] = []) async throws
        -> (Int, JSONValue)
    {
        var arguments = ["-s", "--max-time", "60", "-o", "-", "-w", "\n%{http_code}", "-X", method, base + path]
        if let bearer { arguments += ["-H", "Authorization: Bearer \(bearer)"] }
        for header in headers { arguments += ["-H", header] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = arguments
        let stdout = Pipe()
        process.standardOutput = stdout
        try process.run()
        let data = await BlockingWork.runLong {
            let data = stdout.fileHandleForReading.readDataToEndOfFile()
            _ = waitForExit(of: process)
            return data
        }
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.last ?? "") ?? 0
        let body = lines.dropLast().joined(separator: "\n")
        return (status, (try? JSONValue(parsing: body)) ?? .string(body))
    }
}

/// A webhook receiver on 127.0.0.1: records every notification; requests to `/hang` get no answer until
/// ``release()``.
final class WebhookReceiver: Sendable {
    let port: Int
    private let received: NIOLockedValueBox<[(path: String, body: JSONValue)]>
    private let released: NIOLockedValueBox<Bool>
    private let serving: Task<Void, any Error>

    private init(
        port: Int, received: NIOLockedValueBox<[(path: String, body: JSONValue)]>, released: NIOLockedValueBox<Bool>,
        serving: Task<Void, any Error>
    ) {
        self.port = port
        self.received = received
        self.released = released
        self.serving = serving
    }

    static func start() async throws -> WebhookReceiver {
        let received = NIOLockedValueBox<[(path: String, body: JSONValue)]>([])
        let released = NIOLockedValueBox(false)
        let router = Router()
        router.post("hook/:name") { request, context in
            let body = try await request.body.collect(upTo: 1 << 20)
            let json = (try? JSONValue(parsing: String(buffer: body))) ?? .null
            received.withLockedValue { $0.append((request.uri.path, json)) }
            return HTTPResponse.Status.noContent
        }
        router.post("hang") { request, _ in
            let body = try await request.body.collect(upTo: 1 << 20)
            received.withLockedValue { $0.append(("/hang", (try? JSONValue(parsing: String(buffer: body))) ?? .null)) }
            try await waitUntil("the test released the hanging receiver", limit: .seconds(300)) {
                released.withLockedValue { $0 }
            }
            return HTTPResponse.Status.noContent
        }
        let (bound, onBound) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in onBound.yield(channel.localAddress?.port ?? 0) })
        let serving = Task { try await application.run() }
        var port = 0
        for await value in bound {
            port = value
            break
        }
        return WebhookReceiver(port: port, received: received, released: released, serving: serving)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The notifications received so far at paths starting with `prefix`.
    func bodies(at prefix: String) -> [JSONValue] {
        received.withLockedValue { $0.filter { $0.path.hasPrefix(prefix) }.map(\.body) }
    }

    /// Lets the hanging requests answer.
    func release() {
        released.withLockedValue { $0 = true }
    }

    func stop() async {
        release()
        serving.cancel()
        _ = try? await serving.value
    }
}
