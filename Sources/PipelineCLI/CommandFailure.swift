import ArgumentParser
import PipelineKit

/// A command that ends early: what went wrong, for people, and the exit code the README documents. Commands
/// throw it instead of printing and exiting themselves, so that `PipelineCommand.main()` prints every failure
/// to standard error in one place.
struct CommandFailure: Error, Sendable, CustomStringConvertible {
    /// The exit code: what a script calling `pipeline` can tell from it.
    struct Code: Sendable, Hashable {
        /// The codes themselves, in the order `--help` lists them; ``all`` is derived from this list, so that a code
        /// added here cannot be left out of `--help`.
        private enum Kind: Int32, CaseIterable {
            case failed = 1
            case invalid = 2
            case noBatch = 3
            case interrupted = 130
        }
        private let kind: Kind

        /// An item failed, or the state folder or the database cannot be used.
        static let failed = Code(kind: .failed)
        /// The workflow or the arguments are invalid: nothing ran.
        static let invalid = Code(kind: .invalid)
        /// A command that reads a shared batch or changes its items was given a database without one (and created
        /// nothing in it).
        static let noBatch = Code(kind: .noBatch)
        /// A signal stopped the command; running it again resumes.
        static let interrupted = Code(kind: .interrupted)

        /// The process's exit code.
        var exitCode: ExitCode { ExitCode(kind.rawValue) }

        /// Every code a command ends with when it does not succeed, in the order `--help` lists them: every
        /// `Kind`, so that none can be missing from `--help`.
        static let all: [Code] = Kind.allCases.map { Code(kind: $0) }

        /// What the code tells a script, as `--help` says it.
        var meaning: String {
            switch kind {
            case .failed:
                "at least one item failed (the others still ran), or the state folder is busy or damaged, or the "
                    + "database cannot be used"
            case .invalid: "the workflow or the arguments are invalid (nothing ran)"
            case .noBatch:
                "a command that reads a shared batch (status, serve, cancel and forget with --db) was given a "
                    + "database without one (it created nothing there)"
            case .interrupted: "interrupted by a signal (run the same command again to resume)"
            }
        }

        /// The exit codes as `pipeline --help` lists them: success, then every code of ``all``.
        static var helpText: String {
            "Exit codes: 0 no item failed (items skipped with a reason, such as a filter or a limit, are not "
                + "failures); " + all.map { "\($0.kind.rawValue) \($0.meaning)" }.joined(separator: "; ") + "."
        }
    }

    /// The exit code.
    var code: Code
    /// The lines printed to standard error, in order; none when the command already said everything.
    var messages: [String]

    /// The messages, one per line, for a caller that shows the failure as text rather than letting
    /// `PipelineCommand.main(stages:)` print it: a test's diagnostics, or a log line that interpolates the error.
    var description: String { messages.joined(separator: "\n") }

    /// A failure with `code` that prints `messages`.
    init(_ code: Code, _ messages: String...) {
        self.code = code
        self.messages = messages
    }

    /// A failure with `code` that prints `messages`.
    init(_ code: Code, messages: [String]) {
        self.code = code
        self.messages = messages
    }

    /// A state folder, ledger or database that could not be used (exit code 1), or a database without a batch
    /// (``Code/noBatch``), with the error as it reads.
    static func failed(_ error: any Error) -> CommandFailure {
        let missing = (error as? StateError)?.code == .missing
        return CommandFailure(missing ? .noBatch : .failed, "pipeline: \(error)")
    }

    /// Runs `body`; any error other than a `CommandFailure` becomes ``failed(_:)``.
    static func mappingErrors<T>(_ body: () async throws -> T) async throws(CommandFailure) -> T {
        do {
            return try await body()
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw .failed(error)
        }
    }
}
