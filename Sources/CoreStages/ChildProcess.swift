import CProcessSpawn
import Foundation
import NIOConcurrencyHelpers
import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// A child process run to completion in a process group of its own, its output captured in bounded
/// buffers. Cancelling the calling task sends SIGTERM to the whole group (a shell and what it started),
/// then SIGKILL two seconds later, and the result says it was stopped: what the program wrote until then is kept.
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
        /// Whether the calling task was cancelled by the time the program had ended: it was stopped then, or (a cancel
        /// just as it ended on its own) reported as stopped all the same.
        var stopped = false
    }

    static func run(
        program: String, arguments: [String], environment: [String: String], workingDirectory: String?
    ) async throws -> Result {
        let executable = try locate(program)
        if let workingDirectory {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: workingDirectory, isDirectory: &isDirectory),
                isDirectory.boolValue
            else {
                throw StageFailure("cwd \(workingDirectory) is not a folder", kind: .invalidOptions)
            }
        }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let (pid, stdoutDescriptor, stderrDescriptor) = try spawn(
            executable: executable, arguments: [program] + arguments,
            environment: merged.map { "\($0.key)=\($0.value)" }, workingDirectory: workingDirectory)
        let exited = NIOLockedValueBox(false)
        return await withTaskCancellationHandler {
            async let stdout = drain(stdoutDescriptor, limit: stdoutLimit, keepTail: false)
            async let stderr = drain(stderrDescriptor, limit: stderrLimit, keepTail: true)
            let (status, signalled) = await wait(for: pid)
            exited.withLockedValue { $0 = true }
            return Result(
                status: status, signalled: signalled, stdout: await stdout, stderr: await stderr,
                stopped: Task.isCancelled)
        } onCancel: {
            kill(-pid, SIGTERM)
            DispatchQueue.global().asyncAfter(deadline: .now() + 2) {
                if !exited.withLockedValue({ $0 }) { kill(-pid, SIGKILL) }
            }
        }
    }

    /// Starts the program in a new process group with stdout and stderr to pipes (see `cps_spawn`).
    private static func spawn(
        executable: String, arguments: [String], environment: [String], workingDirectory: String?
    ) throws -> (pid_t, Int32, Int32) {
        var pid: pid_t = 0
        var stdoutDescriptor: Int32 = -1
        var stderrDescriptor: Int32 = -1
        let status = withCStrings(arguments) { argv in
            withCStrings(environment) { envp in
                cps_spawn(executable, argv, envp, workingDirectory, &pid, &stdoutDescriptor, &stderrDescriptor)
            }
        }
        guard status == 0 else {
            throw StageFailure("cannot start \(executable): \(String(cString: strerror(status)))")
        }
        return (pid, stdoutDescriptor, stderrDescriptor)
    }

    /// The executable for `program`: a path as given, or the first match on `PATH`.
    static func locate(_ program: String) throws -> String {
        if program.contains("/") {
            guard FileManager.default.isExecutableFile(atPath: program) else {
                throw StageFailure("\(program) is not an executable file")
            }
            return program
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw StageFailure("program \(program) not found on PATH", kind: .invalidOptions)
    }

    /// Waits for the child on a thread of its own (waitpid blocks).
    private static func wait(for pid: pid_t) async -> (Int32, signalled: Bool) {
        await BlockingWork.runLong {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let signal = status & 0x7F
            return signal == 0 ? ((status >> 8) & 0xFF, false) : (signal, true)
        }
    }

    /// Reads a pipe to its end on a thread of its own (reads block), keeping at most `limit` bytes, then
    /// closes it.
    private static func drain(_ descriptor: Int32, limit: Int, keepTail: Bool) async -> Data {
        await BlockingWork.runLong {
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                if keepTail {
                    data.append(contentsOf: buffer[0..<count])
                    if data.count > 2 * limit { data = data.suffix(limit) }
                } else if data.count < limit {
                    data.append(contentsOf: buffer[0..<min(count, limit - data.count)])
                }
            }
            close(descriptor)
            return keepTail ? data.suffix(limit) : data
        }
    }

    /// Calls `body` with a NULL-terminated C array of C strings.
    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return body(pointers)
    }
}
