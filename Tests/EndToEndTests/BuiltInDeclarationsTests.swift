import Foundation
import PluginHost
import StageKit
import TestSupport
import Testing

@testable import PipelineCLI
@testable import PipelineKit

/// The built-in stage types declare what the engine assumed of every stage before stages declared it, so a workflow
/// behaves as it did: where an item landed (the first of `link`, `url`, `location`, `path` among a stage's outputs)
/// and which option names the file a stage reads (`file`). `set`, whose outputs are its `with`, lands at a `url` it
/// is given, as workflows that compute where they published rely on.
@Suite struct BuiltInDeclarationsTests {
    @Test func everyBuiltInStageDeclaresTheLandingAndInputFileTheEngineAssumedBefore() throws {
        let builtIn = try StageCatalog.shipped.registry().all.filter { $0.source == .builtIn }
        #expect(builtIn.count > 20)
        for stage in builtIn {
            let outputs = Set(stage.outputSchema.fields.map(\.name))
            let convention = ["link", "url", "location", "path"].first(where: outputs.contains)
            let landing = stage.stageType == "set" ? "url" : convention
            #expect(stage.landingOutput == landing, "\(stage.stageType)")
            let file = stage.optionSchema.field(named: "file") == nil ? nil : "file"
            #expect(stage.inputFileOption == file, "\(stage.stageType)")
        }
    }

    @Test func aSetStageThatNamesAURLIsWhereItsItemLanded() async throws {
        let scratch = try Scratch()
        try scratch.write("in/clip.txt", "a clip\n")
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "landing", "inputs": {"path": "in"}, "stages": [
              {"id": "publish", "uses": "set", "with": {"url": "https://video.example/${input.stem}"}},
              {"id": "note", "uses": "set", "with": {"note": "lands nowhere"}}
            ]}
            """)
        let run = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("✓ clip.txt → https://video.example/clip"), "\(run.stdout)")
    }
}
