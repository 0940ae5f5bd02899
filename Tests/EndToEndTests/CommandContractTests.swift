import Foundation
import StageKit
import TestSupport
import Testing

/// What the README promises of the commands themselves, checked against the built binary as a user meets it:
/// exit codes, and messages that say what to do.
@Suite struct CommandContractTests {
    static let workflow = """
        {"version": 1, "name": "contract", "inputs": {"path": "in"},
         "stages": [{"id": "a", "uses": "exec", "with": {"command": ["true"]}}]}
        """

    /// Arguments ArgumentParser refuses itself end with 2, as every other invalid argument does (the README's and
    /// `pipeline --help`'s exit codes), not with its own EX_USAGE (64); nothing runs and `--help` still ends with 0.
    @Test func argumentErrorsExitWithTwo() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        try scratch.write("in/a.txt", "a")
        let refused: [[String]] = [
            ["run"], ["run", "wf.json", "--jobs", "0"], ["run", "wf.json", "--jobs", "many"],
            ["run", "wf.json", "--bogus"], ["run", "wf.json", "--bwlimit", "5XB"], ["frobnicate"],
        ]
        for arguments in refused {
            let result = try await Binary.run(arguments, in: scratch.root)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("Error: ") && result.stderr.contains("Usage: "), "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.path(".pipeline").path))
        let help = try await Binary.run(["run", "--help"], in: scratch.root)
        #expect(help.status == 0 && help.stdout.contains("USAGE: pipeline run"), "\(help.stderr)")
    }

    /// A workflow path that is not a readable file (a workflow's name given to `status`, a folder) is refused
    /// with a sentence that says so, and exit code 2.
    @Test func aWorkflowPathThatIsNotAFileIsExplained() async throws {
        let scratch = try Scratch()
        try scratch.write("flows/wf.json", Self.workflow)
        let cases = [
            (["status", "contract"], "contract: (root): cannot read the workflow file: no such file"),
            (["validate", "flows"], "flows: (root): cannot read the workflow file: it is a folder, not a JSON file"),
        ]
        for (arguments, message) in cases {
            let result = try await Binary.run(arguments, in: scratch.root)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
    }

    /// A stage skipped by its `if` says why in `--report` and `pipeline status`, as one skipped because a stage
    /// it waits for failed does; when an edit reruns the item, the stages after it stand, since it skips for the
    /// same reason again.
    @Test func aStageSkippedByItsConditionSaysWhyInTheReportAndStatus() async throws {
        let scratch = try Scratch()
        func workflow(last: String) -> String {
            """
            {"version": 1, "name": "contract", "inputs": {"path": "in"}, "stages": [
             {"id": "movOnly", "uses": "exec", "if": "input.ext == 'mov'", "with": {"command": ["true"]}},
             {"id": "next", "uses": "exec", "with": {"command": ["sh", "-c", "echo ran >> next.log"]}},
             {"id": "last", "uses": "exec", "with": {"command": ["echo", "\(last)"]}}
            ]}
            """
        }
        try scratch.write("wf.json", workflow(last: "one"))
        try scratch.write("in/a.txt", "a")
        let reason = "if ${input.ext == 'mov'} is false"
        let first = try await Binary.run(["run", "wf.json", "--report", "report.json"], in: scratch.root)
        #expect(first.status == 0, "\(first.stderr)")
        let report = try JSONValue(parsing: Data(contentsOf: scratch.path("report.json")))
        let stages = report["items"]?.arrayValue?.first?["stages"]?.arrayValue ?? []
        let skipped = stages.first { $0["stage"] == "movOnly" }
        #expect(skipped?["status"] == "skipped" && skipped?["reason"]?.stringValue == reason, "\(stages)")
        let status = try await Binary.run(["status", "wf.json"], in: scratch.root)
        #expect(status.stdout.contains("skipped (\(reason))"), "\(status.stdout)")
        try scratch.write("wf.json", workflow(last: "two"))
        let rerun = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root)
        let summary = try #require(runFinished(rerun.stdout))
        #expect(summary["stagesRun"] == 1 && summary["stagesReused"] == 1, "\(summary)")
        #expect(scratch.read("next.log").split(separator: "\n").count == 1)
    }
}
