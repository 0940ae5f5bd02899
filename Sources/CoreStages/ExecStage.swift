import Foundation
import Logging
public import StageKit

/// `exec`: runs a program with templated arguments. Its stdout becomes the `stdout` output, parsed as JSON
/// when it is JSON; a nonzero exit fails the stage with the end of stderr in the message. The end of stderr is
/// logged as history lines whatever the outcome (after a success, a failure, or a stop at the `timeLimit`), so an
/// item's history shows what the program said; the run's output shows them only with `--verbose`.
public struct ExecStage: Stage {
    /// The options of `exec`.
    public struct Options: StageOptions {
        /// The program, then its arguments; numbers and booleans (`${probe.width}`) are passed as their text.
        @Option("Program and arguments, each templated, e.g. [\"sh\", \"-c\", \"...\"].", minimumCount: 1)
        public var command: [CommandText]
        /// Variables added to the inherited environment.
        @Option("Environment variables added to the inherited environment.") public var env: [String: CommandText] = [:]
        /// The working folder.
        @Option("Working folder (default: the current folder).") public var cwd: String?
        /// Exit codes that count as success.
        @Option("Exit codes that count as success.", minimumCount: 1) public var successCodes: [Int32] = [0]
        /// Whether a failure is worth retrying (commands often fail for passing reasons).
        @Option("Whether a failed command may be retried by the stage's retry policy.") public var retryable = true
        /// How long the program may run before it is stopped, so that a command that hangs (a download without a
        /// timeout of its own) cannot hold its item, and in a shared batch its lease, forever.
        @Option(
            "The longest the program may run: it is then stopped (SIGTERM to its process group, SIGKILL 2 s later) and the stage fails (retryable when retryable is); 0: no limit. The stage's timeout applies as well.",
            minimum: 0)
        public var timeLimit = ExecStage.defaultTimeLimit

        public init() {}

        /// A program that is an empty string (`"command": ["", "-v"]`, or `[""]` or null once a template resolves)
        /// cannot run; an empty command is refused by its count.
        public static func problems(in with: JSONValue) -> [OptionProblem] {
            switch with["command"]?.arrayValue?.first {
            case .string("")?, .null?: break
            default: return []
            }
            return [
                OptionProblem(
                    at: JSONPath.root.appending("command").appending(index: 0),
                    "the program (command's first element) is empty; give the program, then its arguments")
            ]
        }
    }

    /// An argument or environment value: a string, or a number or boolean that a template resolved to,
    /// taken as its text.
    public struct CommandText: OptionValue, Hashable {
        /// The text passed to the program.
        public var text: String

        public static var optionType: OptionType { .string }

        public init(from decoder: any Decoder) throws {
            text = try JSONValue(from: decoder).interpolated
        }

        public func encode(to encoder: any Encoder) throws {
            try text.encode(to: encoder)
        }
    }

    /// The outputs of `exec`.
    public struct Outputs: StageOutputs {
        /// The exit status.
        @Output("The exit status.") public var exitCode: Int32 = 0
        /// Standard output: the parsed JSON value when it is JSON, otherwise the text without its final newline.
        @Output("Standard output, parsed as JSON when it is JSON (so ${id.stdout.field} works).")
        public var stdout = JSONValue.null
        /// Standard error, last 64 KiB.
        @Output("Standard error (last 64 KiB).") public var stderr = ""

        public init() {}
    }

    public static let stageType = "exec"
    /// How long a program may run when `timeLimit` is not given: long enough for any batch job, short enough that
    /// a hung one ends the same day.
    public static let defaultTimeLimit = TimeSpan(seconds: 6 * 3600)
    public static let summary = "Runs a program with templated arguments; JSON on stdout becomes outputs."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        // The declared count and `problems(in:)` make sure there is a program, and that it is not empty.
        let command = options.command.map(\.text)
        let program = command.first ?? ""
        let arguments = Array(command.dropFirst())
        let (environment, folder) = (options.env.mapValues(\.text), options.cwd)
        let (result, overran) = try await Self.limited(options.timeLimit) {
            try await ChildProcess.run(
                program: program, arguments: arguments, environment: environment, workingDirectory: folder)
        }
        Self.log(result.stderr, to: context.logger)
        let disposition: FailureDisposition = options.retryable ? .retryable() : .fatal
        if result.stopped {
            guard overran else { throw CancellationError() }
            throw StageFailure(
                "\(program) ran longer than its timeLimit of \(options.timeLimit) and was stopped",
                kind: .commandFailed,
                disposition: disposition)
        }
        guard options.successCodes.contains(result.status) else {
            let tail = String(decoding: result.stderr.suffix(2000), as: UTF8.self).trimmingCharacters(
                in: .whitespacesAndNewlines)
            let reason =
                result.signalled ? "was killed by signal \(result.status)" : "exited with status \(result.status)"
            throw StageFailure(
                "\(program) \(reason)" + (tail.isEmpty ? "" : ": \(tail)"), kind: .commandFailed,
                disposition: disposition)
        }
        return Outputs.with {
            $0.exitCode = result.status
            $0.stdout = Self.parse(result.stdout)
            $0.stderr = String(decoding: result.stderr, as: UTF8.self)
        }
    }

    /// The end of standard error the stage logs, whole lines of it: what the program said, in the attempt's log
    /// lines (an item's history keeps them), whether it succeeded, failed or was stopped.
    static let stderrLogged = 4 * 1024

    /// Logs the end of `stderr` (its last ``stderrLogged`` bytes, from the first whole line) as history lines, one
    /// call a line: kept in the attempt's log at info level, shown in the run's output only at debug level.
    private static func log(_ stderr: Data, to logger: Logger) {
        for line in tail(of: stderr) { logger.history(line) }
    }

    /// The lines of the end of `stderr`: its last ``stderrLogged`` bytes from the first line that starts in them,
    /// or, when one line fills them, from the first character that starts in them; blank lines left out.
    static func tail(of stderr: Data) -> [String] {
        let newline = UInt8(ascii: "\n")
        var end = stderr.suffix(stderrLogged)
        if end.startIndex > stderr.startIndex, stderr[end.startIndex - 1] != newline {
            if let first = end.firstIndex(of: newline) {
                end = end[end.index(after: first)...]
            } else {
                end = end.drop { $0 & 0xC0 == 0x80 }
            }
        }
        return String(decoding: end, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Runs `child` for at most `limit` (none when it is 0): past it the child's task is cancelled, which stops its
    /// process group; the result (what the program wrote until then) comes back all the same, with whether the
    /// limit stopped it.
    private static func limited(
        _ limit: TimeSpan, _ child: @escaping @Sendable () async throws -> ChildProcess.Result
    ) async throws -> (ChildProcess.Result, overran: Bool) {
        guard limit.seconds > 0 else { return (try await child(), false) }
        return try await withThrowingTaskGroup(of: ChildProcess.Result?.self) { group in
            group.addTask { try await child() }
            group.addTask {
                try? await Task.sleep(for: limit.duration)
                return nil
            }
            defer { group.cancelAll() }
            while let finished = try await group.next() {
                guard let result = finished else {
                    // The limit (or a cancel of the stage) came first: the child is stopped and answers.
                    group.cancelAll()
                    continue
                }
                return (result, result.stopped && !Task.isCancelled)
            }
            throw CancellationError()
        }
    }

    /// JSON when the output is a JSON document, otherwise the text without its final newline.
    static func parse(_ data: Data) -> JSONValue {
        if let value = try? JSONValue(parsing: data) { return value }
        var text = String(decoding: data, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return .string(text)
    }
}
