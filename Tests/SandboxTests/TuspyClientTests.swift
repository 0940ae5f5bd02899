import Foundation
import NIOHTTP1
import StageKit
import Testing

@testable import Sandbox

/// A third-party tus client (tuspy, Python) against the sandbox: the sandbox must speak tus as
/// others implement it, not only as our own client does.
@Suite("third-party tus client")
struct TuspyClientTests {
    /// `python3` on the PATH with the `tusclient` module of `pip install tuspy`.
    static let python: String? = {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let candidate = "\(folder)/python3"
            guard FileManager.default.isExecutableFile(atPath: candidate) else { continue }
            let probe = try? ChildRun.runBlocking(candidate, ["-c", "import tusclient"])
            return probe?.status == 0 ? candidate : nil
        }
        return nil
    }()

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("tuspy_client.py").path
    }

    @Test(
        "tuspy uploads in small chunks, is interrupted, and resumes from the upload URL",
        .enabled(if: Self.python != nil, "needs python3 with tuspy (pip install tuspy)")
    )
    func tuspyUploadAndResume() async throws {
        let python = try #require(Self.python)
        try await withSandbox { _, client in
            let file = Fixture.bytes(700_000, seed: 3)
            let folder = Fixture.temporaryFolder()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let path = folder + "/sample.bin"
            try Data(file).write(to: URL(fileURLWithPath: path))

            let result = try await ChildRun.run(python, [Self.script, client.baseURL + "/upload", path, "65536", "3"])
            #expect(result.status == 0, "tuspy failed: \(result.error)")
            let report = try #require(JSONValue.parse(Array(result.output.utf8)), "tuspy printed: \(result.output)")
            #expect(report["interruptedAt"]?.integerValue == Int64(3 * 65536))
            #expect(report["resumedFrom"]?.integerValue == Int64(3 * 65536))
            #expect(report["finalOffset"]?.integerValue == Int64(file.count))

            let url = try #require(report["url"]?.stringValue)
            let uploadID = String(url.split(separator: "/").last ?? "")
            let stored = try await client.send(.GET, "/sandbox/uploads/\(uploadID)/sha256", auth: false).text
            #expect(stored == Fixture.sha256Hex(file))
        }
    }
}

/// Runs a program to completion and captures its output.
enum ChildRun {
    struct Result: Sendable {
        var status: Int32
        var output: String
        var error: String
    }

    /// Runs the program on a thread of its own: waiting for it must not hold one of the threads that run
    /// Swift's tasks (two on a two-core machine), which the sandbox in this process needs to answer it.
    static func run(_ program: String, _ arguments: [String]) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Swift.Result { try self.runBlocking(program, arguments) })
            }
        }
    }

    /// Runs the program on the calling thread: for quick probes only.
    static func runBlocking(_ program: String, _ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            output: String(decoding: outputData, as: UTF8.self),
            error: String(decoding: errorData, as: UTF8.self)
        )
    }
}
