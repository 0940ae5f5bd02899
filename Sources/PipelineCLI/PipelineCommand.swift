public import ArgumentParser
import CoreStages
import Foundation
import MediaStages
import NIOConcurrencyHelpers
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
        discussion: """
            Exit codes: 0 no item failed (items skipped with a reason, such as a filter or a limit, are \
            not failures); 1 at least one item failed (the others still ran), or the state folder is busy or \
            damaged; 2 the workflow or the arguments are invalid (nothing ran); \
            130 interrupted by a signal (run the same command again to resume).
            """,
        subcommands: [
            RunCommand.self, PlanCommand.self, WatchCommand.self, ValidateCommand.self, StatusCommand.self,
            StagesCommand.self,
            SchemaCommand.self, CancelCommand.self, ForgetCommand.self, SubmitCommand.self, WorkerCommand.self,
            SandboxCommand.self, ServeCommand.self,
        ]
    )

    public init() {}

    /// Runs the command line with the built-in stages plus `stages`.
    public static func main(registering stages: [any Stage.Type]) async {
        StageCatalog.extraStages.withLockedValue { $0 = stages }
        await main()
    }

    /// Parses the arguments and runs the command. A ``CommandFailure`` is printed here and ends the process with
    /// its exit code; ArgumentParser reports its own errors (usage, `--help`) as usual, except that a usage error
    /// ends with 2, the documented code for invalid arguments, rather than ArgumentParser's EX_USAGE (64).
    public static func main() async {
        MediaToolkit.prepareProcess()
        // A reader that goes away (`pipeline status | head`) ends the output (Output drops the rest), not the
        // process with SIGPIPE: every command ends with its own exit code. Children get the default back.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            for message in failure.messages { Output.error(message) }
            exit(withError: failure.code.exitCode)
        } catch  where exitCode(for: error) == .validationFailure {
            Output.error(fullMessage(for: error))
            exit(withError: CommandFailure.Code.invalid.exitCode)
        } catch {
            exit(withError: error)
        }
    }
}

/// The stage types available to the commands of this process.
enum StageCatalog {
    static let extraStages = NIOLockedValueBox<[any Stage.Type]>([])

    /// The stage types that ship with `pipeline`.
    static let builtInStages: [any Stage.Type] =
        CoreStageTypes.all + MediaStageTypes.all + UploadStageTypes.all + PlatformStageTypes.all

    /// Built-in stages, then the compiled-in ones, then those of the plugin libraries at `plugins`. A plugin
    /// that cannot be used, or a stage type whose name is taken, is reported and ends the command with exit
    /// code 2.
    static func registry(plugins: [String] = []) throws -> StageRegistry {
        var registry = StageRegistry()
        do {
            for stage in builtInStages { try registry.register(stage, source: .builtIn) }
            for stage in extraStages.withLockedValue({ $0 }) { try registry.register(stage, source: .compiledIn) }
            for path in plugins {
                for descriptor in try PluginLoader.load(path) { try registry.register(descriptor) }
            }
        } catch {
            throw CommandFailure(.invalid, "pipeline: \(error)")
        }
        return registry
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
