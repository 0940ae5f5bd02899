import Foundation
import PipelineKit
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process run to completion, its output captured in bounded buffers. Cancelling the calling
/// task sends SIGTERM, then SIGKILL two seconds later.
enum ChildProcess {
    /// Standard output beyond this is not kept (and is then not parsed as JSON).
    static let stdoutLimit = 16 * 1024 * 1024
    /// Only the last part of standard error is kept.
    static let stderrLimit = 64 * 1024

    struct Result: Sendable {
        var status: Int32
        var signalled: Bool
        var stdout: Data
        var stderr: Data
    }

    static func run(
        program: String, arguments: [String], environment: [String: String], workingDirectory: String?
    ) async throws -> Result {
        let process = Process()
        process.executableURL = try locate(program)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        if let workingDirectory {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: workingDirectory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw StageFailure("cwd \(workingDirectory) is not a folder")
            }
            process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory)
        }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let (exits, exitContinuation) = AsyncStream<(Int32, Bool)>.makeStream()
        process.terminationHandler = { finished in
            exitContinuation.yield((finished.terminationStatus, finished.terminationReason == .uncaughtSignal))
            exitContinuation.finish()
        }
        do {
            try process.run()
        } catch {
            throw StageFailure("cannot start \(program): \(error.localizedDescription)")
        }
        let pid = process.processIdentifier
        let exited = Mutex(false)
        let stdoutHandle = output.fileHandleForReading
        let stderrHandle = errors.fileHandleForReading
        return try await withTaskCancellationHandler {
            async let stdout = drain(stdoutHandle, limit: stdoutLimit, keepTail: false)
            async let stderr = drain(stderrHandle, limit: stderrLimit, keepTail: true)
            var iterator = exits.makeAsyncIterator()
            let (status, signalled) = await iterator.next() ?? (-1, true)
            exited.withLock { $0 = true }
            let result = Result(status: status, signalled: signalled, stdout: await stdout, stderr: await stderr)
            try Task.checkCancellation()
            return result
        } onCancel: {
            kill(pid, SIGTERM)
            DispatchQueue.global().asyncAfter(deadline: .now() + 2) {
                if !exited.withLock({ $0 }) { kill(pid, SIGKILL) }
            }
        }
    }

    /// The executable for `program`: a path as given, or the first match on `PATH`.
    static func locate(_ program: String) throws -> URL {
        if program.contains("/") {
            guard FileManager.default.isExecutableFile(atPath: program) else {
                throw StageFailure("\(program) is not an executable file")
            }
            return URL(fileURLWithPath: program)
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(program)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw StageFailure("program \(program) not found on PATH")
    }

    /// Reads a pipe to its end on a thread of its own (reads block), keeping at most `limit` bytes.
    private static func drain(_ handle: FileHandle, limit: Int, keepTail: Bool) async -> Data {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var data = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    if keepTail {
                        data.append(chunk)
                        if data.count > limit { data = data.suffix(limit) }
                    } else if data.count < limit {
                        data.append(chunk.prefix(limit - data.count))
                    }
                }
                continuation.resume(returning: data)
            }
        }
    }
}
