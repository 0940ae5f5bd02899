public import Foundation
import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// The Python launchers of third-party test servers.
let peerScripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Peers")

/// A third-party server started by a Python script that prints its port on the first line; stopped
/// when the value goes away.
public final class PeerServer: @unchecked Sendable {
    public let port: Int
    public let folder: URL
    private let process: Process

    /// Starts `python3 script folder extra…` and waits for the port.
    public init(script: String, arguments: [String] = []) async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("peer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", peerScripts.appendingPathComponent(script).path, folder.path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let handle = output.fileHandleForReading
        let line = await BlockingWork.runLong { () -> String in
            var bytes: [UInt8] = []
            while let byte = try? handle.read(upToCount: 1), let first = byte.first, first != 10 { bytes.append(first) }
            return String(decoding: bytes, as: UTF8.self)
        }
        guard let port = Int(line) else {
            process.terminate()
            throw PeerError(
                message: "\(script) did not start (is its Python package installed? run scripts/install-deps.sh)")
        }
        self.port = port
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        try? FileManager.default.removeItem(at: folder)
    }
}

public struct PeerError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }

    public init(message: String) {
        self.message = message
    }
}

/// A file of pseudo-random bytes (deterministic for a seed) in a temporary folder.
public func randomFile(bytes: Int, seed: UInt64 = 42) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString).bin")
    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    var state = seed
    var remaining = bytes
    while remaining > 0 {
        let count = min(remaining, 1 << 20)
        var chunk = [UInt8](repeating: 0, count: count)
        for index in stride(from: 0, to: count, by: 8) {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            withUnsafeBytes(of: state) { word in
                for offset in 0..<min(8, count - index) { chunk[index + offset] = word[offset] }
            }
        }
        handle.write(Data(chunk))
        remaining -= count
    }
    return url
}

/// SHA-256 of a file, by the system's sha256sum (a reference outside our code).
public func sha256sum(_ path: String) async -> String {
    await BlockingWork.runLong {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try? process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }
}

/// A file of `megabytes` MiB from /dev/urandom, made by dd (fast for hundreds of MiB).
public func urandomFile(megabytes: Int, in folder: URL) async throws -> URL {
    let url = folder.appendingPathComponent("random-\(megabytes)MiB.bin")
    await BlockingWork.runLong {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/dd")
        process.arguments = ["if=/dev/urandom", "of=\(url.path)", "bs=1M", "count=\(megabytes)", "status=none"]
        try? process.run()
        process.waitUntilExit()
    }
    return url
}

/// What a command printed, and how it ended.
public struct ToolOutput: Sendable {
    public var status: Int32
    public var stdout: Data
    public var stderr: String

    /// stdout as text.
    public var text: String { String(decoding: stdout, as: UTF8.self) }
}

/// Runs `executable arguments…` to the end on a thread of its own (stderr is read once stdout closed: keep
/// it short).
public func runTool(_ executable: String, _ arguments: [String]) async -> ToolOutput {
    await BlockingWork.runLong {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let (output, errors) = (Pipe(), Pipe())
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            return ToolOutput(status: -1, stdout: Data(), stderr: "cannot run \(executable): \(error)")
        }
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return ToolOutput(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }
}

/// Runs `python3 Peers/<script> arguments…` and returns its stdout, trimmed.
public func peerTool(_ script: String, _ arguments: [String]) async -> String {
    await runTool("/usr/bin/env", ["python3", peerScripts.appendingPathComponent(script).path] + arguments).text
        .trimmingCharacters(in: .whitespacesAndNewlines)
}

/// The body of an answer, by curl (a client outside our code).
public func curl(_ arguments: [String]) async -> String {
    await runTool("/usr/bin/curl", ["-sS", "--max-time", "10"] + arguments).text
}

/// The body of a GET.
public func httpGet(_ url: String) async -> String {
    await curl([url])
}

/// The body of a GET with a bearer token.
public func httpGet(_ url: String, bearer token: String) async -> String {
    await curl(["-H", "Authorization: bearer \(token)", url])
}

/// The body of the answer to a POST of a JSON body.
public func httpPost(_ url: String, json: String) async -> String {
    await curl(["-X", "POST", "-H", "Content-Type: application/json", "--data", json, url])
}
