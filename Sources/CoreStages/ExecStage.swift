import Foundation
public import PipelineKit
import Logging

/// `exec`: runs a program with templated arguments. Its stdout becomes the `stdout` output, parsed as JSON
/// when it is JSON; a nonzero exit fails the stage with the end of stderr in the message.
public struct ExecStage: Stage {
    /// The options of `exec`.
    public struct Options: Decodable, Sendable {
        /// The program, then its arguments.
        public var command: [String]
        /// Variables added to the inherited environment.
        public var env: [String: String]?
        /// The working folder.
        public var cwd: String?
        /// Exit codes that count as success (default `[0]`).
        public var successCodes: [Int32]?
        /// Whether a failure is worth retrying (default true: commands often fail for passing reasons).
        public var retryable: Bool?

        private enum CodingKeys: String, CodingKey {
            case command, env, cwd, successCodes, retryable
        }

        /// Arguments and environment values that resolved to numbers or booleans (`${probe.width}`) are
        /// passed as their text.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            command = try container.decode([JSONValue].self, forKey: .command).map(\.interpolated)
            env = try container.decodeIfPresent([String: JSONValue].self, forKey: .env)?.mapValues(\.interpolated)
            cwd = try container.decodeIfPresent(String.self, forKey: .cwd)
            successCodes = try container.decodeIfPresent([Int32].self, forKey: .successCodes)
            retryable = try container.decodeIfPresent(Bool.self, forKey: .retryable)
        }
    }

    /// The outputs of `exec`.
    public struct Outputs: Encodable, Sendable {
        /// The exit status.
        public var exitCode: Int32
        /// Standard output: the parsed JSON value when it is JSON, otherwise the text without its final newline.
        public var stdout: JSONValue
        /// Standard error, last 64 KiB.
        public var stderr: String
    }

    public static let type = "exec"
    public static let summary = "Runs a program with templated arguments; JSON on stdout becomes outputs."
    public static let optionSchema = OptionSchema([
        OptionField("command", .array(.string), required: true, "Program and arguments, each templated, e.g. [\"sh\", \"-c\", \"...\"]."),
        OptionField("env", .dictionary(.string), "Environment variables added to the inherited environment."),
        OptionField("cwd", .string, "Working folder (default: the current folder)."),
        OptionField("successCodes", .array(.integer), default: [0], "Exit codes that count as success."),
        OptionField("retryable", .boolean, default: true, "Whether a failed command may be retried by the stage's retry policy."),
    ])
    public static let outputSchema = OutputSchema([
        OutputField("exitCode", "The exit status."),
        OutputField("stdout", "Standard output, parsed as JSON when it is JSON (so ${id.stdout.field} works)."),
        OutputField("stderr", "Standard error (last 64 KiB)."),
    ])

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        guard let program = options.command.first, !program.isEmpty else {
            throw StageFailure("command is empty: give the program and its arguments")
        }
        let result = try await ChildProcess.run(
            program: program, arguments: Array(options.command.dropFirst()), environment: options.env ?? [:],
            workingDirectory: options.cwd)
        let successCodes = options.successCodes ?? [0]
        guard successCodes.contains(result.status) else {
            let tail = String(decoding: result.stderr.suffix(2000), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let reason = result.signalled ? "was killed by signal \(result.status)" : "exited with status \(result.status)"
            throw StageFailure(
                "\(program) \(reason)" + (tail.isEmpty ? "" : ": \(tail)"),
                disposition: options.retryable ?? true ? .retryable() : .fatal)
        }
        if !result.stderr.isEmpty {
            context.logger.debug("\(String(decoding: result.stderr.suffix(2000), as: UTF8.self))")
        }
        return Outputs(exitCode: result.status, stdout: Self.parse(result.stdout), stderr: String(decoding: result.stderr, as: UTF8.self))
    }

    /// JSON when the output is a JSON document, otherwise the text without its final newline.
    static func parse(_ data: Data) -> JSONValue {
        if let (value, _) = try? JSONParser.parse(data) { return value }
        var text = String(decoding: data, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return .string(text)
    }
}
