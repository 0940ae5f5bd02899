import ArgumentParser
import Testing

@testable import PipelineCLI

/// The command `arguments` name, parsed and validated as `pipeline` does it, without a process (swift-argument-
/// parser's `AssertParse`, for Swift Testing).
func parsed<Command: ParsableCommand>(
    _ arguments: [String], as type: Command.Type, sourceLocation: SourceLocation = #_sourceLocation
) throws -> Command {
    let command = try PipelineCommand.parseAsRoot(arguments)
    return try #require(command as? Command, "\(arguments) parsed to \(command)", sourceLocation: sourceLocation)
}

/// How `pipeline` refuses `arguments`: the exit code it ends with and the message it prints; nil when it takes them.
func refusal(of arguments: [String]) -> (code: Int32, message: String)? {
    do {
        _ = try PipelineCommand.parseAsRoot(arguments)
        return nil
    } catch {
        return (PipelineCommand.exitCode(ending: error).rawValue, PipelineCommand.fullMessage(for: error))
    }
}
