import ArgumentParser
import Foundation
import PluginHost
import StageKit
import TestSupport
import Testing

@testable import PipelineCLI

/// Commands run in this process with the catalog the program hands them, and end with a ``CommandFailure`` that
/// carries what `pipeline` prints and its exit code.
@Suite struct StageCatalogCommandTests {
    /// A stage type a custom executable compiles in is known to the commands it is given to, and only to them; an
    /// unknown stage type says how stage types are added.
    @Test func commandsUseTheStageTypesTheyAreGiven() async throws {
        let scratch = try Scratch()
        try scratch.write(
            "wf.json", #"{"version": 1, "name": "t", "stages": [{"id": "a", "uses": "test.compiled"}]}"#)
        let validate = try parsed(["validate", scratch.path("wf.json").path], as: ValidateCommand.self)
        let failure = await #expect(throws: CommandFailure.self) { try await validate.run(stages: .shipped) }
        #expect(failure?.code == .invalid)
        let unknown = failure?.messages.first { $0.contains(#"unknown stage type "test.compiled""#) }
        #expect(unknown?.contains(#"--plugin PATH or the workflow's "plugins""#) == true, "\(failure?.messages ?? [])")
        var catalog = StageCatalog.shipped
        catalog.compiledIn = [CompiledStage.self]
        try await validate.run(stages: catalog)
    }

    /// A command that needs the stage types, run through ArgumentParser's `run()` rather than with the program's
    /// catalog, refuses to run (it would lose a custom executable's compiled-in stage types without a word), with
    /// exit code 1.
    @Test func aCommandRunWithoutTheCatalogRefusesToRun() async throws {
        let stages = try parsed(["stages"], as: StagesCommand.self)
        let failure = await #expect(throws: CommandFailure.self) { try await stages.run() }
        #expect(failure?.code == .failed)
        #expect(
            failure?.messages == [
                "pipeline: internal error: `stages` was run without the program's stage types (it is run through "
                    + "PipelineCommand.main(stages:)); nothing ran"
            ])
    }

    /// A workflow path that is not a readable file (a workflow's name given to `status`, a folder) is refused with
    /// a sentence that says so, and exit code 2.
    @Test func aWorkflowPathThatIsNotAFileIsExplained() async throws {
        let scratch = try Scratch()
        try scratch.write("flows/wf.json", "{}")
        let cases = [
            (
                ["status", scratch.path("contract").path, "--state", scratch.path(".pipeline").path],
                "contract: (root): cannot read the workflow file: no such file"
            ),
            (
                ["validate", scratch.path("flows").path],
                "flows: (root): cannot read the workflow file: it is a folder, not a JSON file"
            ),
        ]
        for (arguments, message) in cases {
            let command = try #require(try PipelineCommand.parseAsRoot(arguments) as? any StageCatalogCommand)
            let failure = await #expect(throws: CommandFailure.self) { try await command.run(stages: .shipped) }
            #expect(failure?.code == .invalid && failure.map { PipelineCommand.exitCode(ending: $0).rawValue } == 2)
            #expect(failure?.messages.contains { $0.contains(message) } == true, "\(failure?.messages ?? [])")
        }
    }
}

/// A stage compiled into a custom executable (tests only).
private struct CompiledStage: Stage {
    struct Options: StageOptions {}
    struct Outputs: StageOutputs {}
    static let stageType = "test.compiled"
    static let summary = "Does nothing (tests only)."
    init() {}
    func run(_ options: Options, context: StageContext) async throws -> Outputs { Outputs() }
}
