import Foundation
import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// `hello.send`: copies a file into a folder as an upload would, over a link that may drop. It declares what
/// an upload stage declares: it uses the network (so `--transfers` bounds it), it retries its own failed
/// requests under the workflow's `retry` policy (so the engine runs it once), and one of its outputs exists
/// only when the workflow asks for it.
struct SendStage: Stage {
    struct Options: StageOptions {
        /// The file to send.
        @Option("The file to send.") var file: String
        /// Where it goes.
        @Option("The folder the file goes to.") var to: String
        /// How long each request takes.
        @Option("Seconds each request takes.") var pause = 0.0
        /// Requests that fail before one gets through, as on a flaky link.
        @Option("Requests that fail (retryably) before one succeeds.") var failures = 0
        /// A log of requests.
        @Option("A file that gets a line when each request starts and ends.") var journal: String?
        /// A receipt to write; the stage then has the output `receipt`.
        @Option("A receipt file to write once the file is sent (adds the output `receipt`).") var receipt: String?
    }

    struct Outputs: StageOutputs {
        @Output("The copy.") var path = ""
        @Output("Requests it took.") var requests = 0
        /// An output only when the workflow gives the option.
        @Output("The receipt file.", whenGiven: "receipt") var receipt: String? = nil
    }

    static let stageType = "hello.send"
    static let summary = "Copies a file into a folder like an upload that retries itself (a sample plugin)."
    static let resource = StageResource.network
    static let retriesItself = true

    /// A plugin stage gives its own reason not to stream, as a built-in one does.
    static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
        "it copies a finished file in one request; hello.follow copies an export while it is written"
    }

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let source = URL(fileURLWithPath: options.file)
        let target = URL(fileURLWithPath: options.to).appendingPathComponent(source.lastPathComponent)
        let policy = context.retryPolicy
        var request = 1
        while true {
            do {
                try await send(source, to: target, request: request, options: options, context: context)
                break
            } catch let failure as StageFailure where failure.disposition.isRetryable && request < policy.attempts {
                let delay = policy.delay(afterAttempt: request)
                context.retrying(attempt: request, after: delay, because: failure)
                try await Task.sleep(for: delay)
                request += 1
            }
        }
        let requests = request
        if let receipt = options.receipt {
            try await BlockingWork.run {
                try "\(target.path) in \(requests) requests\n".write(toFile: receipt, atomically: true, encoding: .utf8)
            }
        }
        return Outputs(path: target.path, requests: requests, receipt: options.receipt)
    }

    /// One request: the first `failures` fail as a dropped link does.
    private func send(
        _ source: URL, to target: URL, request: Int, options: Options, context: StageContext
    ) async throws {
        let name = source.lastPathComponent
        let line = "\(name) attempt \(context.attempt) request \(request)"
        try await note("start \(line)", in: options.journal)
        try await Task.sleep(for: .milliseconds(Int(options.pause * 1000)))
        guard request > options.failures else {
            try await note("end \(line) failed", in: options.journal)
            throw StageFailure.retryable("the link dropped during request \(request)", kind: .network)
        }
        try await BlockingWork.run {
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            if FileManager.default.fileExists(atPath: target.path) { try FileManager.default.removeItem(at: target) }
            try FileManager.default.copyItem(at: source, to: target)
        }
        try await note("end \(line)", in: options.journal)
    }

    /// Appends a line to the journal in one write, so lines from stages running at once never interleave.
    private func note(_ line: String, in journal: String?) async throws {
        guard let journal else { return }
        try await BlockingWork.run {
            let descriptor = open(journal, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw StageFailure("cannot open the journal \(journal)") }
            defer { close(descriptor) }
            let bytes = Array((line + "\n").utf8)
            guard write(descriptor, bytes, bytes.count) == bytes.count else {
                throw StageFailure("cannot write the journal \(journal)")
            }
        }
    }
}
