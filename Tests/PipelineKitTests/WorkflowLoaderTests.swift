import Foundation
import Testing

@testable import PipelineKit
@testable import StageKit

@Suite struct WorkflowLoaderTests {
    private func problems(_ json: String) -> [String] {
        do {
            _ = try WorkflowLoader(registry: Sandbox.registry).load(data: Data(json.utf8), file: "wf.json")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func reportsEveryProblemAtOnceWithItsPosition() {
        let found = problems(
            """
            {"version": 1, "name": "x",
             "stages": [
              {"id": "a", "uses": "test.prob", "with": {}},
              {"id": "b", "uses": "test.probe", "with": {"key": 5, "kye": "x", "value": "${c.value}"}},
              {"id": "c", "uses": "test.probe", "with": {"key": "${b.valeu}"}}
             ]}
            """)
        #expect(found.count == 5)
        #expect(
            found.contains(
                #"wf.json:3:23: stages[0].uses: unknown stage type "test.prob" (did you mean "test.probe"?) (pipeline stages lists them; a plugin's stage types are added with --plugin PATH or the workflow's "plugins")"#
            ))
        #expect(found.contains(where: { $0.hasPrefix("wf.json:4:53: stages[1].with.key: expected a string") }))
        #expect(found.contains(#"wf.json:4:56: stages[1].with.kye: unknown option "kye" (did you mean "key"?)"#))
        #expect(
            found.contains(where: {
                $0.contains("stages[1].with.value: ${c.value} refers to stage \"c\", which runs later")
            }))
        #expect(
            found.contains(where: {
                $0.contains(#"stage "b" (test.probe) has no output "valeu""#) && $0.contains(#"did you mean "value"?"#)
            }))
    }

    @Test func checksTheTopLevel() {
        #expect(
            problems(#"{"version": 2, "stages": [{"id": "a", "uses": "test.probe", "with": {"key": "k"}}]}"#)
                == ["wf.json:1:13: version: unsupported workflow version 2; this pipeline reads version 1"])
        #expect(
            problems(#"{"version": 1, "stages": []}"#) == [
                "wf.json:1:26: stages: stages is empty: a workflow needs at least one stage"
            ])
        #expect(
            problems(#"{"version": 1, "stagse": []}"#).contains(
                #"wf.json:1:16: stagse: unknown workflow key "stagse" (did you mean "stages"?)"#))
    }

    @Test func readsNotifyAndRefusesWhatCannotBeAnnounced() throws {
        let stages = #""stages": [{"id": "s", "uses": "test.probe", "with": {"key": "k"}}]"#
        let loaded = try WorkflowLoader(registry: Sandbox.registry).load(
            data: Data(
                """
                {"version": 1, \(stages), "notify": [
                  {"url": "${env.HOOK}", "on": ["itemFailed", "batchFinished"], "format": "slack"},
                  {"url": "http://127.0.0.1:9/hook"}]}
                """.utf8), file: "wf.json")
        #expect(loaded.notify.map(\.url) == ["${env.HOOK}", "http://127.0.0.1:9/hook"])
        #expect(loaded.notify.map(\.events) == [[.itemFailed, .batchFinished], [.batchFinished]])
        #expect(loaded.notify.map(\.format) == [.slack, nil])
        #expect(loaded.environmentNames == ["HOOK"], "a webhook's URL read from the environment is a secret")

        let found = problems(
            """
            {"version": 1, \(stages), "notify": [
              {"url": "ftp://x/y", "on": ["batchFinishd"], "format": "teams"},
              {"url": "https://x/${input.name}", "when": 1}]}
            """)
        #expect(found.count == 5, "\(found)")
        #expect(found.contains(#"wf.json:2:11: notify[0].url: expected an http or https URL, found "ftp://x/y""#))
        #expect(
            found.contains(
                #"wf.json:2:31: notify[0].on[0]: unknown event "batchFinishd"; the events are batchFinished, itemFailed (did you mean "batchFinished"?)"#
            ), "\(found)")
        #expect(found.contains(where: { $0.contains("notify[0].format: expected one of generic, slack, discord") }))
        #expect(found.contains(where: { $0.contains("notify[1].url: a notify url may read only ${env.NAME}") }))
        #expect(found.contains(where: { $0.contains(#"notify[1].when: unknown notify key "when""#) }))
    }

    /// `inputs.damaged` is one of the policies, `fail` when absent.
    @Test func readsWhatHappensToDamagedMedia() throws {
        let loader = WorkflowLoader(registry: Sandbox.registry)
        func workflow(_ damaged: String) -> Data {
            Data(
                #"{"version": 1, "inputs": {"path": "in"\#(damaged)}, "stages": [{"id": "s", "uses": "test.probe", "with": {"key": "k"}}]}"#
                    .utf8)
        }
        #expect(try loader.load(data: workflow(""), file: "wf.json").inputs?.damaged == .fail)
        for policy in DamagedInputPolicy.allCases {
            let loaded = try loader.load(data: workflow(#", "damaged": "\#(policy.rawValue)""#), file: "wf.json")
            #expect(loaded.inputs?.damaged == policy)
        }
        #expect(
            problems(String(decoding: workflow(#", "damaged": "ignore""#), as: UTF8.self)) == [
                #"wf.json:1:52: inputs.damaged: expected "fail", "skip" or "export", found "ignore""#
            ])
    }

    @Test func findsCyclesThroughVars() {
        let found = problems(
            #"{"version": 1, "vars": {"a": "${vars.b}", "b": "x${vars.c}", "c": "${vars.a}"}, "stages": [{"id": "s", "uses": "test.probe", "with": {"key": "k"}}]}"#
        )
        #expect(found.count == 1)
        #expect(found[0].contains("cycle through ${}: vars.a → vars.b → vars.c → vars.a"))
    }

    @Test func varOverridesMustBeDeclaredAndKeepTheirType() throws {
        let loader = WorkflowLoader(registry: Sandbox.registry)
        let json = Data(
            #"{"version": 1, "vars": {"n": 1}, "stages": [{"id": "s", "uses": "test.probe", "with": {"key": "k"}}]}"#
                .utf8)
        #expect(try loader.load(data: json, file: "wf.json", varOverrides: ["n": "42"]).vars["n"] == 42)
        #expect(try loader.load(data: json, file: "wf.json", varOverrides: ["n": "abc"]).vars["n"] == "abc")
        #expect(throws: WorkflowError.self) { try loader.load(data: json, file: "wf.json", varOverrides: ["m": "1"]) }
    }

    @Test func theCheckedInSchemaFollowsTheGrammarTheLoaderChecks() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let file = root.appendingPathComponent("Workflows/workflow.schema.json")
        let checkedIn = try JSONValue(parsing: Data(contentsOf: file))
        // The schema of the built-in stages is generated by `pipeline schema`; EndToEndTests compares the
        // binary's output with the file. Here: its sections are the grammar's, member for member.
        let properties = try #require(checkedIn["properties"]?.objectValue)
        #expect(Set(properties.keys) == Set(WorkflowGrammar.workflow.names))
        #expect(
            Set(properties["inputs"]?["properties"]?.objectValue?.keys ?? [:].keys) == Set(WorkflowGrammar.inputs.names)
        )
        let stage = try #require(checkedIn["$defs"]?["stage"]?["properties"]?.objectValue)
        #expect(Set(stage.keys) == Set(WorkflowGrammar.stage.names))
        let retry = try #require(stage["retry"]?["properties"]?.objectValue)
        #expect(Set(retry.keys) == Set(WorkflowGrammar.retry.names))
        #expect(
            checkedIn["required"]
                == .array(WorkflowGrammar.workflow.members.filter(\.isRequired).map { .string($0.name) }))
    }

    @Test func everyKeyTheGrammarNamesIsAcceptedAndOthersAreRefusedWithASuggestion() throws {
        let loader = WorkflowLoader(registry: Sandbox.registry)
        let json = Data(
            #"{"version": 1, "stages": [{"id": "s", "uses": "test.probe", "retyr": {}, "with": {"key": "k"}}]}"#.utf8)
        #expect {
            try loader.load(data: json, file: "wf.json")
        } throws: { error in
            "\(error)".contains("unknown stage key \"retyr\" (did you mean \"retry\"?)")
        }
    }
}
