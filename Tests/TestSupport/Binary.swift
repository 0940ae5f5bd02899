public import Foundation
import NIOConcurrencyHelpers
public import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// The built `pipeline` binary, run as a user would. Waiting happens on threads of their own, never on
/// the few threads Swift concurrency runs the tests on.
public enum Binary {
    public static let url: URL = {
        if let path = ProcessInfo.processInfo.environment["PIPELINE_BINARY"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "pipeline")
    }()

    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Starts the binary (or `executable`, such as a wrapper that runs it as another user); the caller waits or
    /// kills.
    public static func start(
        _ arguments: [String], in folder: URL, environment: [String: String] = [:], executable: URL? = nil
    ) throws -> RunningBinary {
        let process = Process()
        process.executableURL = executable ?? url
        process.arguments = arguments
        process.currentDirectoryURL = folder
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        return RunningBinary(
            process: process, stdout: Reader(stdout.fileHandleForReading), stderr: Reader(stderr.fileHandleForReading))
    }

    /// Runs the binary to completion.
    public static func run(
        _ arguments: [String], in folder: URL, environment: [String: String] = [:], executable: URL? = nil
    ) async throws -> Output {
        let running = try start(arguments, in: folder, environment: environment, executable: executable)
        let status = await running.exit()
        return Output(status: status, stdout: await running.stdout.text(), stderr: await running.stderr.text())
    }
}

/// A started `pipeline` process.
public final class RunningBinary: @unchecked Sendable {
    private let process: Process
    public let stdout: Reader
    public let stderr: Reader

    init(process: Process, stdout: Reader, stderr: Reader) {
        self.process = process
        self.stdout = stdout
        self.stderr = stderr
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning && ended.withLockedValue { $0 } == nil }
    private let ended = NIOLockedValueBox<Int32?>(nil)

    public func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the process to end; its exit status (or 128 + signal, as a shell reports it).
    public func exit() async -> Int32 {
        let (process, ended) = (self.process, self.ended)
        return await BlockingWork.runLong {
            if let status = ended.withLockedValue({ $0 }) { return status }
            let status = waitForExit(of: process)
            ended.withLockedValue { $0 = status }
            return status
        }
    }
}

/// Blocks until `process` ends; its exit status (or 128 + signal, as a shell reports it). Foundation learns of a
/// child's end only from SIGCHLD, which the kernel drops when the thread that started the child has ended: the
/// child then belongs to the main thread, where SIGCHLD is neither blocked nor handled, so `waitUntilExit()`
/// spins forever next to a zombie. Waiting on the pid itself needs no signal.
public func waitForExit(of process: Process) -> Int32 {
    var status: Int32 = 0
    while true {
        let reaped = waitpid(process.processIdentifier, &status, 0)
        if reaped == process.processIdentifier {
            let signal = status & 0x7f
            return signal == 0 ? (status >> 8) & 0xff : 128 + signal
        }
        if reaped == -1 && errno == EINTR { continue }
        // Foundation reaped it first (ECHILD), so it knows the status.
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }
}

/// Reads a pipe to its end on a thread of its own.
public final class Reader: Sendable {
    private let data = NIOLockedValueBox(Data())
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [data, done] in
            while case let chunk = handle.availableData, !chunk.isEmpty {
                data.withLockedValue { $0.append(chunk) }
            }
            done.signal()
        }
    }

    /// Everything the process wrote, once it closed the pipe.
    public func text() async -> String {
        await BlockingWork.runLong {
            self.done.wait()
            self.done.signal()
            return self.soFar
        }
    }

    /// What the process wrote so far.
    public var soFar: String {
        data.withLockedValue { String(decoding: $0, as: UTF8.self) }
    }
}

/// A temporary folder for one test, removed at the end.
public struct Scratch: ~Copyable {
    public let root: URL

    public init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: root)
    }

    public func path(_ relative: String) -> URL {
        root.appendingPathComponent(relative)
    }

    public func write(_ relative: String, _ text: String) throws {
        let url = path(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    public func read(_ relative: String) -> String {
        (try? String(contentsOf: path(relative), encoding: .utf8)) ?? ""
    }

    /// Every file under the folder, with its contents.
    public func allFiles(under relative: String) -> [(String, String)] {
        let base = path(relative)
        let names = (try? FileManager.default.subpathsOfDirectory(atPath: base.path)) ?? []
        return names.compactMap { name in
            let url = base.appendingPathComponent(name)
            guard let data = try? Data(contentsOf: url) else { return nil }
            return (name, String(decoding: data, as: UTF8.self))
        }
    }
}

/// The repository root.
public let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The `runFinished` event of a `--json` run.
public func runFinished(_ stdout: String) -> JSONValue? {
    stdout.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }.last {
        $0["event"] == "runFinished"
    }
}
