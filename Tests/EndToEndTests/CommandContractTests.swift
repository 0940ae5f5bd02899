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

    /// The process ends with the exit code the parser chose (`PipelineCLITests.ArgumentTests` checks each refusal
    /// in-process): a usage error with 2 and its message and the usage on standard error, before anything is
    /// created; `--help` with 0.
    @Test func argumentErrorsExitWithTwo() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        try scratch.write("in/a.txt", "a")
        for arguments in [["run", "wf.json", "--jobs", "0"], ["frobnicate"]] {
            let result = try await Binary.run(arguments, in: scratch.root)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("Error: ") && result.stderr.contains("Usage: "), "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.path(".pipeline").path))
        let help = try await Binary.run(["run", "--help"], in: scratch.root)
        #expect(help.status == 0 && help.stdout.contains("USAGE: pipeline run"), "\(help.stderr)")
    }

    /// A stage skipped by its `if` says why in `--report` and `pipeline status`, as one skipped because a stage
    /// it waits for failed does; when an edit reruns the item, the stages after it stand, since it skips for the
    /// same reason again.
    @Test func aStageSkippedByItsConditionSaysWhyInTheReportAndStatus() async throws {
        let scratch = try Scratch()
        func workflow(last: String, condition: String = "input.ext == 'mov'") -> String {
            """
            {"version": 1, "name": "contract", "inputs": {"path": "in"}, "stages": [
             {"id": "movOnly", "uses": "exec", "if": "\(condition)", "with": {"command": ["true"]}},
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
        // An edited condition that is still false (with a space after its braces, which is not part of it) reruns
        // nothing after it: they saw null from the stage either way. The skip's reason is the new condition.
        try scratch.write("wf.json", workflow(last: "two", condition: "${input.ext == 'mov' || input.ext == 'mxf'} "))
        let edited = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root)
        let editedSummary = try #require(runFinished(edited.stdout))
        #expect(editedSummary["stagesRun"] == 0 && editedSummary["stagesReused"] == 2, "\(editedSummary)")
        #expect(scratch.read("next.log").split(separator: "\n").count == 1)
        let newStatus = try await Binary.run(["status", "wf.json"], in: scratch.root)
        #expect(
            newStatus.stdout.contains("skipped (if ${input.ext == 'mov' || input.ext == 'mxf'} is false)"),
            "\(newStatus.stdout)")
    }

    /// `--fresh` forgets one workflow's items, and removes only their scratch folders: the export another
    /// workflow of the same state folder made there, and that its ledger still counts as done, stays.
    @Test func freshLeavesTheScratchFilesOfOtherWorkflows() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: repositoryRoot.appendingPathComponent("samples/clip-h264-aac.mp4"), to: scratch.path("in/clip.mp4"))
        try scratch.write(
            "stills.json",
            """
            {"version": 1, "name": "stills", "inputs": {"path": "in"},
             "stages": [{"id": "still", "uses": "ffmpeg.thumbnail", "with": {"maxWidth": 64}}]}
            """)
        try scratch.write("other.json", Self.workflow)
        let stills = try await Binary.run(["run", "stills.json", "--report", "stills.report.json"], in: scratch.root)
        #expect(stills.status == 0, "\(stills.stderr)")
        let report = try JSONValue(parsing: Data(contentsOf: scratch.path("stills.report.json")))
        let still = report["items"]?.arrayValue?.first?["stages"]?.arrayValue?.first?["outputs"]?["path"]?.stringValue
        let path = try #require(still)
        #expect(path.hasPrefix(scratch.path(".pipeline/scratch").path), "\(path)")
        let other = try await Binary.run(["run", "other.json", "--fresh"], in: scratch.root)
        #expect(other.status == 0, "\(other.stderr)")
        #expect(FileManager.default.fileExists(atPath: path), "--fresh of another workflow removed \(path)")
        // Its own --fresh still starts the workflow over, without the files of its forgotten items.
        let again = try await Binary.run(["run", "stills.json", "--fresh", "--json"], in: scratch.root)
        #expect(again.status == 0 && runFinished(again.stdout)?["succeeded"] == 1, "\(again.stdout)")
        #expect(!FileManager.default.fileExists(atPath: path), "its own --fresh kept \(path)")
    }

    /// `pipeline stages` shows the bounds `validate` checks, in its list and in `--json`.
    @Test func stagesShowTheBoundsOfNumberOptions() async throws {
        let text = try await Binary.run(["stages"], in: repositoryRoot)
        #expect(text.stdout.contains("segmentJobs: integer from 1 to 16 = 1"), "\(text.stdout)")
        let json = try JSONValue(parsing: try await Binary.run(["stages", "--json"], in: repositoryRoot).stdout)
        let transcode = json.arrayValue?.first { $0["type"] == "ffmpeg.transcode" }
        let jobs = transcode?["options"]?.arrayValue?.first { $0["name"] == "segmentJobs" }
        #expect(jobs?["minimum"] == 1 && jobs?["maximum"] == 16, "\(String(describing: jobs))")
        let threads = transcode?["options"]?.arrayValue?.first { $0["name"] == "threads" }
        #expect(threads?["minimum"] == 0 && threads?["maximum"] == .null, "\(String(describing: threads))")
    }

    /// `pipeline stages` shows the bounds of options nested in an object (`video.crf`) or in each element of an
    /// array (`renditions[].height`) as it does a top-level option's, and the bounds of sizes, durations, bit
    /// rates and arrays in their own units; `--json` nests the options with their bounds.
    @Test func stagesShowTheBoundsOfNestedAndQuantityOptions() async throws {
        let text = try await Binary.run(["stages"], in: repositoryRoot)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("      crf: integer from 0 to 63 — ") }, "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("      height: integer from 16 to 4320 (required) — ") })
        #expect(lines.contains { $0.hasPrefix("    partSize: size of 5GiB or less = 8388608 — ") })
        #expect(lines.contains { $0.hasPrefix("    stallTimeout: duration of more than 0s = 30 — ") })
        #expect(lines.contains { $0.hasPrefix("      bitrate: bit rate of 1k or more — ") })
        #expect(lines.contains { $0.hasPrefix("    command: [string] of at least 1 element (required) — ") })
        let json = try JSONValue(parsing: try await Binary.run(["stages", "--json"], in: repositoryRoot).stdout)
        let transcode = json.arrayValue?.first { $0["type"] == "ffmpeg.transcode" }
        let video = transcode?["options"]?.arrayValue?.first { $0["name"] == "video" }
        let crf = video?["options"]?.arrayValue?.first { $0["name"] == "crf" }
        #expect(crf?["minimum"] == 0 && crf?["maximum"] == 63, "\(String(describing: video))")
        let upload = json.arrayValue?.first { $0["type"] == "s3.upload" }
        let stall = upload?["options"]?.arrayValue?.first { $0["name"] == "stallTimeout" }
        #expect(stall?["exclusiveMinimum"] == 0 && stall?["minimum"] == .null, "\(String(describing: stall))")
        let exec = json.arrayValue?.first { $0["type"] == "exec" }
        let command = exec?["options"]?.arrayValue?.first { $0["name"] == "command" }
        #expect(command?["minimumCount"] == 1, "\(String(describing: command))")
    }

    /// A part size under the store's minimum (0 too) is raised to it when the upload starts, as it always was: bounds
    /// refuse only what cannot work (over 5 GiB), so a workflow that ran before still validates; so do a wait's
    /// timeout of 0 (check once) and a shared link of exactly 7 days.
    @Test func aPartSizeUnderTheStoresMinimumStillValidates() async throws {
        let scratch = try Scratch()
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "parts", "stages": [
              {"id": "s3", "uses": "s3.upload", "with": {"bucket": "b", "key": "k", "partSize": "1MiB"}},
              {"id": "oss", "uses": "oss.upload", "with": {"endpoint": "https://oss.example", "region": "cn-shanghai", "bucket": "b", "key": "k", "partSize": "10KiB"}},
              {"id": "s3zero", "uses": "s3.upload", "with": {"bucket": "b", "key": "k", "partSize": 0, "shareFor": "7d"}},
              {"id": "wait", "uses": "aliyun.vod.wait", "with": {"api": "https://vod.example", "accessKeyId": "a", "accessKeySecret": "s", "videoId": "v", "timeout": "0s", "interval": "0s"}}
            ]}
            """)
        let validate = try await Binary.run(["validate", "wf.json"], in: scratch.root)
        #expect(validate.status == 0, "\(validate.stdout)\(validate.stderr)")
    }

    /// A stage's time in `--report` is kept to the millisecond, so a stage shorter than a second does not read 0.
    @Test func theReportTimesStagesToTheMillisecond() async throws {
        let scratch = try Scratch()
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "timed", "inputs": {"path": "in"},
             "stages": [{"id": "short", "uses": "exec", "with": {"command": ["sleep", "0.3"]}}]}
            """)
        try scratch.write("in/a.txt", "a")
        let run = try await Binary.run(["run", "wf.json", "--report", "report.json"], in: scratch.root)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try JSONValue(parsing: Data(contentsOf: scratch.path("report.json")))
        let stage = report["items"]?.arrayValue?.first?["stages"]?.arrayValue?.first
        let seconds = try #require(stage?["seconds"]?.doubleValue, "\(String(describing: stage))")
        #expect(seconds >= 0.3 && seconds < 5, "\(seconds)")
        #expect(abs((seconds * 1000).rounded() - seconds * 1000) < 1e-6 && seconds.rounded() != seconds, "\(seconds)")
    }

    /// `status --failed` over the whole ledger lists the workflows with failed items only, and says so when
    /// there are none.
    @Test func statusFailedShowsOnlyWorkflowsWithFailures() async throws {
        let scratch = try Scratch()
        try scratch.write("in/a.txt", "a")
        try scratch.write("fine.json", Self.workflow)
        try scratch.write(
            "broken.json",
            """
            {"version": 1, "name": "broken", "inputs": {"path": "in"},
             "stages": [{"id": "a", "uses": "exec", "retry": {"attempts": 1}, "with": {"command": ["false"]}}]}
            """)
        #expect(try await Binary.run(["run", "fine.json"], in: scratch.root).status == 0)
        let none = try await Binary.run(["status", "--failed"], in: scratch.root)
        #expect(none.status == 0 && none.stdout.hasPrefix("no failed items in"), "\(none.stdout)")
        #expect(try await Binary.run(["run", "broken.json"], in: scratch.root).status == 1)
        let failed = try await Binary.run(["status", "--failed"], in: scratch.root)
        #expect(failed.stdout.contains("broken (") && !failed.stdout.contains("contract ("), "\(failed.stdout)")
    }
}
