public import ArgumentParser
import CoreStages
import Foundation
import MediaStages
import PipelineKit
import PlatformStages
import PluginHost
import UploadStages

public import protocol StageKit.Stage

/// `pipeline`: the command line. A custom executable calls ``main(registering:)`` with its own stages.
public struct PipelineCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "pipeline",
        abstract: "Moves media files through declarative JSON workflows, resumably.",
        discussion: CommandFailure.Code.helpText,
        subcommands: [
            RunCommand.self, PlanCommand.self, WatchCommand.self, ValidateCommand.self, StatusCommand.self,
            StagesCommand.self,
            SchemaCommand.self, CancelCommand.self, ForgetCommand.self, SubmitCommand.self, WorkerCommand.self,
            SandboxCommand.self, ServeCommand.self,
        ]
    )

    public init() {}

    /// Runs the command line with the built-in stages plus `stages`, compiled into a custom executable.
    public static func main(registering stages: [any Stage.Type]) async {
        var catalog = StageCatalog.shipped
        catalog.compiledIn = stages
        await main(stages: catalog)
    }

    /// Runs the command line with the built-in stages.
    public static func main() async {
        await main(stages: .shipped)
    }

    /// Parses the arguments and runs the command, with the stage types of `catalog` for the commands that need
    /// them. A ``CommandFailure`` is printed here and ends the process with its exit code; ArgumentParser reports
    /// its own errors (usage, `--help`) as usual, except that a usage error ends with 2, the documented code for
    /// invalid arguments, rather than ArgumentParser's EX_USAGE (64).
    static func main(stages catalog: StageCatalog) async {
        MediaToolkit.prepareProcess()
        // A reader that goes away (`pipeline status | head`) ends the output (Output drops the rest), not the
        // process with SIGPIPE: every command ends with its own exit code. Children get the default back.
        signal(SIGPIPE, SIG_IGN)
        do {
            switch try parseAsRoot() {
            // Before the plain async commands: a StageCatalogCommand's own run() refuses to run.
            case let command as any StageCatalogCommand: try await command.run(stages: catalog)
            case var command as any AsyncParsableCommand: try await command.run()
            case var command: try command.run()
            }
        } catch {
            switch error {
            case let failure as CommandFailure: failure.messages.forEach(Output.error)
            case _ where exitCode(for: error) == .validationFailure: Output.error(fullMessage(for: error))
            default: exit(withError: error)
            }
            exit(withError: exitCode(ending: error))
        }
    }

    /// The exit code `error` ends the command line with: a ``CommandFailure``'s own, 2 for arguments that
    /// ArgumentParser refuses, and ArgumentParser's for the rest (0 for `--help`).
    static func exitCode(ending error: any Error) -> ExitCode {
        if let failure = error as? CommandFailure { return failure.code.exitCode }
        let code = exitCode(for: error)
        return code == .validationFailure ? CommandFailure.Code.invalid.exitCode : code
    }
}

/// A command that needs the stage types: ``PipelineCommand/main(stages:)`` hands it the program's catalog.
protocol StageCatalogCommand: AsyncParsableCommand {
    /// Runs the command with the stage types of `catalog`.
    func run(stages catalog: StageCatalog) async throws
}

extension StageCatalogCommand {
    /// ArgumentParser's entry point, which has no catalog to give: refused, so that a caller that runs the command
    /// other than through ``PipelineCommand/main(stages:)`` learns it at once instead of running without a custom
    /// executable's compiled-in stage types. It cannot be left out: ArgumentParser's own default would print the
    /// help and succeed.
    func run() async throws {
        throw CommandFailure(
            .failed,
            "pipeline: internal error: `\(Self._commandName)` was run without the program's stage types (it is run "
                + "through PipelineCommand.main(stages:)); nothing ran")
    }
}

extension StageCatalog {
    /// The stage types that ship with `pipeline`.
    static let shipped = StageCatalog(
        builtIn: CoreStageTypes.all + MediaStageTypes.all + UploadStageTypes.all + PlatformStageTypes.all)

    /// ``registry(plugins:)`` for a command: a plugin that cannot be used, or a stage type whose name is taken, is
    /// reported and ends the command with exit code 2.
    func commandRegistry(plugins: [String]) throws(CommandFailure) -> StageRegistry {
        do {
            return try registry(plugins: plugins)
        } catch {
            throw CommandFailure(.invalid, "pipeline: \(error)")
        }
    }
}

/// `--plugin PATH`, shared by the commands that need the stage types.
struct PluginOptions: ParsableArguments {
    @Option(
        name: .customLong("plugin"),
        help: ArgumentHelp("A stage plugin library to load (repeatable).", valueName: "PATH"))
    var paths: [String] = []
}

/// `--state DIR`, shared by the commands that read or write state.
struct StateOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The state folder.", valueName: "DIR"))
    var state: String = ".pipeline"
}
