import Foundation
import Testing

@testable import PipelineKit
@testable import StageKit

/// The order of an item's stages (`after`) and what `validate` refuses about it.
@Suite struct StageGraphTests {
    private func problems(_ json: String) -> [String] {
        do {
            _ = try WorkflowLoader(registry: Sandbox.registry).load(data: Data(json.utf8), file: "wf.json")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    private func graph(_ json: String) throws -> StageGraph {
        try WorkflowLoader(registry: Sandbox.registry).load(data: Data(json.utf8), file: "wf.json").graph
    }

    /// export → (thumbnail ∥ s3 ∥ tus) → notify (after all three).
    private let branched = """
        {"version": 1, "name": "b", "stages": [
          {"id": "export", "uses": "test.probe", "with": {"key": "e"}},
          {"id": "thumbnail", "uses": "test.probe", "after": ["export"], "with": {"key": "t", "value": "${export.value}"}},
          {"id": "s3", "uses": "test.probe", "after": ["export"], "with": {"key": "s"}},
          {"id": "tus", "uses": "test.probe", "after": ["export"], "with": {"key": "u"}},
          {"id": "notify", "uses": "test.probe", "after": ["tus", "s3", "thumbnail"], "with": {"key": "n", "value": "${s3.run} ${thumbnail.value}"}}
        ]}
        """

    @Test func withoutAfterEachStageWaitsForTheOneBefore() throws {
        let chain = try graph(probeWorkflow("k"))
        #expect(chain.waits == [[], [0], [1]])
        #expect(!chain.isBranched && chain.cycle == nil && chain.order == [0, 1, 2])
        #expect(chain.summary == "a → b → c")
        #expect(chain.dependents(of: 0) == [1, 2] && chain.waits(2, for: 0) && !chain.waits(0, for: 2))
    }

    @Test func afterMakesBranchesThatJoinAgain() throws {
        let graph = try graph(branched)
        #expect(graph.isBranched)
        #expect(graph.waitIDs(of: 4) == ["tus", "s3", "thumbnail"])
        #expect(graph.summary == "export → thumbnail ∥ s3 ∥ tus → notify")
        #expect(graph.dependents(of: 2) == [4], "only notify waits for s3")
        #expect(!graph.waits(2, for: 1) && !graph.waits(1, for: 2), "the branches do not wait for each other")
        #expect(graph.waits(4, for: 0), "notify waits for export through the branches")
    }

    @Test func aStageMayWaitForOneWrittenAfterItAndTheOrderFollowsTheWaits() throws {
        let graph = try graph(
            """
            {"version": 1, "stages": [
              {"id": "upload", "uses": "test.probe", "after": ["export"], "with": {"key": "u", "value": "${export.run}"}},
              {"id": "export", "uses": "test.probe", "after": [], "with": {"key": "e"}}
            ]}
            """)
        #expect(graph.order == [1, 0])
        #expect(graph.summary == "export → upload")
    }

    @Test func refusesUnknownNamesSelfWaitsAndOnCancelStagesInAfter() {
        let found = problems(
            """
            {"version": 1, "stages": [
              {"id": "export", "uses": "test.probe", "with": {"key": "e"}},
              {"id": "s3", "uses": "test.probe", "after": ["exprot", "s3", "undo"], "with": {"key": "s"}}
             ],
             "onCancel": [{"id": "undo", "uses": "test.probe", "after": ["s3"], "with": {"key": "x"}}]}
            """)
        #expect(
            found == [
                #"wf.json:3:48: stages[1].after[0]: unknown stage "exprot" in after: expected the id of a stage (did you mean "export"?)"#,
                #"wf.json:3:58: stages[1].after[1]: stage "s3" cannot wait for itself"#,
                #"wf.json:3:64: stages[1].after[2]: "undo" is an onCancel stage: stages cannot wait for it"#,
                #"wf.json:5:61: onCancel[0].after: onCancel stages take no after: they run one after another, once the item's stages have stopped"#,
            ], "\(found)")
    }

    @Test func refusesACycleOnceWithTheStagesAlongIt() {
        let found = problems(
            """
            {"version": 1, "stages": [
              {"id": "a", "uses": "test.probe", "after": ["c"], "with": {"key": "a"}},
              {"id": "b", "uses": "test.probe", "with": {"key": "b"}},
              {"id": "c", "uses": "test.probe", "with": {"key": "c"}}
            ]}
            """)
        #expect(
            found == [
                "wf.json:2:46: stages[0].after: these stages wait for each other: a → c → b → a (each waits for the next); remove one of these waits"
            ], "\(found)")
    }

    @Test func refusesAReferenceToAStageItDoesNotWaitForWithTheAfterToWrite() {
        let found = problems(
            """
            {"version": 1, "stages": [
              {"id": "export", "uses": "test.probe", "with": {"key": "e"}},
              {"id": "s3", "uses": "test.probe", "after": ["export"], "with": {"key": "s"}},
              {"id": "tus", "uses": "test.probe", "after": ["export"], "with": {"key": "${s3.run}"}},
              {"id": "notify", "uses": "test.probe", "if": "s3.run > 0", "with": {"key": "${export.run}"}}
            ]}
            """)
        #expect(
            found == [
                #"wf.json:4:76: stages[2].with.key: ${s3.run} refers to stage "s3", which stage "tus" does not wait for, so its outputs may not exist yet; add it to the stage's after: "after": ["export", "s3"]"#,
                #"wf.json:5:48: stages[3].if: ${s3.run} refers to stage "s3", which stage "notify" does not wait for, so its outputs may not exist yet; add it to the stage's after: "after": ["tus", "s3"]"#,
            ], "\(found)")
        // Waiting through another stage is waiting: notify waits for export through tus.
        #expect(problems(branched).isEmpty)
    }

    @Test func refreshWithMustNameAStageItWaitsFor() {
        let found = problems(
            """
            {"version": 1, "stages": [
              {"id": "token", "uses": "test.token"},
              {"id": "other", "uses": "test.token", "after": []},
              {"id": "up", "uses": "test.guarded", "after": ["other"], "refreshWith": "token", "with": {"token": "${other.token}"}}
            ]}
            """)
        #expect(
            found == [
                #"wf.json:4:75: stages[2].refreshWith: refreshWith names stage "token", which stage "up" does not wait for; add it to the stage's after: "after": ["other", "token"]"#
            ], "\(found)")
    }
}
