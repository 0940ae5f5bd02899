import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct CommandLineTests {
    static func workflow(sleep: Double = 0, token: Bool = false) -> String {
        """
        {"version": 1, "name": "cli", "inputs": {"path": "in"},
         "vars": {"auth": "\(token ? "Bearer ${env.PIPELINE_TEST_TOKEN}" : "none")"},
         "stages": [
          {"id": "first", "uses": "exec", "with": {"command": ["sh", "-c", "sleep \(sleep); echo \\"$0 $1\\" >> first.log; echo '{\\"ok\\": true}'", "${input.name}", "${vars.auth}"]}},
          {"id": "second", "uses": "exec", "with": {"command": ["sh", "-c", "echo \\"$0\\" >> second.log; echo \\"$1\\" >&2", "${input.name}", "${vars.auth}"]}}
        ]}
        """
    }

    private func prepare(_ scratch: borrowing Scratch, files: Int = 2, sleep: Double = 0, token: Bool = false) throws {
        try scratch.write("wf.json", Self.workflow(sleep: sleep, token: token))
        for index in 0..<files { try scratch.write("in/f\(index).txt", "\(index)") }
    }

    @Test func aSecondRunOnTheSameStateFolderIsToldItIsBusy() async throws {
        let scratch = try Scratch()
        try prepare(scratch, files: 1, sleep: 3)
        let first = try Binary.start(["run", "wf.json"], in: scratch.root)
        let state = scratch.path(".pipeline")
        try await waitUntil("the first run took up its item") {
            !(await ledgerItemCounts(under: state, workflow: "cli")).isEmpty
        }
        let second = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(second.status == 1)
        #expect(second.stderr.contains("is in use by another pipeline process (pid \(first.pid))"), "\(second.stderr)")
        #expect(await first.exit() == 0)
        #expect(scratch.read("first.log").split(separator: "\n").count == 1)
        let status = try await Binary.run(["status"], in: scratch.root)
        #expect(status.status == 0)
        #expect(status.stdout.contains("f0.txt  done    done   done"), "\(status.stdout)")
    }

    @Test func noSecretInStateFilesOrOutput() async throws {
        let scratch = try Scratch()
        try prepare(scratch, token: true)
        let secret = "tok-\(UUID().uuidString)"
        let environment = ["PIPELINE_TEST_TOKEN": secret]
        let human = try await Binary.run(["run", "wf.json", "--verbose"], in: scratch.root, environment: environment)
        #expect(human.status == 0, "\(human.stderr)")
        let machine = try await Binary.run(
            ["run", "wf.json", "--json", "--fresh", "--verbose"], in: scratch.root, environment: environment)
        #expect(machine.status == 0)
        // The commands really received the token...
        #expect(scratch.read("first.log").contains(secret))
        // ...and nothing pipeline wrote or printed contains it.
        for (name, text) in scratch.allFiles(under: ".pipeline") {
            #expect(!text.contains(secret), "secret in \(name)")
        }
        for text in [human.stdout, human.stderr, machine.stdout, machine.stderr] {
            #expect(!text.contains(secret))
        }
        #expect(machine.stdout.contains("${env.PIPELINE_TEST_TOKEN}"))
        let status = try await Binary.run(["status", "--json"], in: scratch.root)
        #expect(!status.stdout.contains(secret))
    }

    @Test func aMissingEnvironmentVariableIsReportedBeforeAnythingRuns() async throws {
        let scratch = try Scratch()
        try prepare(scratch, token: true)
        let result = try await Binary.run(
            ["run", "wf.json"], in: scratch.root, environment: ["PIPELINE_TEST_TOKEN": ""].filter { _ in false })
        #expect(result.status == 2)
        #expect(result.stderr.contains("needs these environment variables, which are not set: PIPELINE_TEST_TOKEN"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path(".pipeline").path))
    }

    @Test func changingAStageRerunsItAndTheLaterOnesOnly() async throws {
        let scratch = try Scratch()
        try prepare(scratch)
        #expect(try await Binary.run(["run", "wf.json"], in: scratch.root).status == 0)
        let changed = Self.workflow().replacingOccurrences(
            of: "echo \\\"$0\\\" >> second.log", with: "echo \\\"$0\\\" >> second.log; true")
        #expect(changed != Self.workflow())
        try scratch.write("wf.json", changed)
        let rerun = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root)
        let summary = try #require(runFinished(rerun.stdout))
        #expect(summary["stagesRun"] == 2 && summary["stagesReused"] == 2)
        #expect(scratch.read("first.log").split(separator: "\n").count == 2)
        #expect(scratch.read("second.log").split(separator: "\n").count == 4)
        #expect(try await Binary.run(["run", "wf.json", "--var", "auth=other"], in: scratch.root).status == 0)
        #expect(scratch.read("first.log").split(separator: "\n").count == 4)
    }

    @Test func aDamagedLedgerIsReportedWithItsPathAndFreshMovesItAside() async throws {
        let scratch = try Scratch()
        try prepare(scratch, files: 1)
        #expect(try await Binary.run(["run", "wf.json"], in: scratch.root).status == 0)
        let file = scratch.path(".pipeline/ledger.sqlite")
        var content = try Data(contentsOf: file)
        content.replaceSubrange(0..<32, with: Data(repeating: 0x21, count: 32))
        try content.write(to: file)
        let result = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(result.status == 1)
        #expect(result.stderr.contains("the ledger \(file.path) is damaged"), "\(result.stderr)")
        #expect(result.stderr.contains("--fresh"))
        #expect(try Data(contentsOf: file) == content)
        let status = try await Binary.run(["status"], in: scratch.root)
        #expect(status.status == 1 && status.stderr.contains("is damaged"), "\(status.stderr)")
        let fresh = try await Binary.run(["run", "wf.json", "--fresh"], in: scratch.root)
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.stderr.contains("moved the damaged ledger to"), "\(fresh.stderr)")
        let aside = try FileManager.default.contentsOfDirectory(atPath: scratch.path(".pipeline").path).filter {
            $0.hasPrefix("ledger.sqlite.damaged-")
        }
        #expect(aside.count == 1)
    }

    @Test func aStateFolderOfTheEarlierLayoutIsRefusedUntilFresh() async throws {
        let scratch = try Scratch()
        try prepare(scratch, files: 1)
        try scratch.write(".pipeline/runs/cli/run.json", "{}")
        let refused = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("layout of an earlier pipeline"), "\(refused.stderr)")
        #expect(scratch.read("first.log").isEmpty)
        #expect(try await Binary.run(["run", "wf.json", "--fresh"], in: scratch.root).status == 0)
        #expect(!FileManager.default.fileExists(atPath: scratch.path(".pipeline/runs").path))
    }

    @Test func sigtermStopsCleanlyWith130AndTheNextRunResumes() async throws {
        let scratch = try Scratch()
        try prepare(scratch, files: 3, sleep: 1)
        let process = try Binary.start(["run", "wf.json"], in: scratch.root)
        let state = scratch.path(".pipeline")
        // The first item done and the second taken up: its one-second stage is under way.
        try await waitUntil("the first item is done and the second started") {
            let counts = await ledgerItemCounts(under: state, workflow: "cli")
            return counts["succeeded", default: 0] > 0 && counts["pending", default: 0] > 0
        }
        process.signal(SIGTERM)
        #expect(await process.exit() == 130)
        let output = await process.stdout.text()
        #expect(output.contains("interrupted; it resumes on the next run"))
        // The summary accounts for every file: the interrupted one and the one never started.
        #expect(output.contains("3 files: 1 done, 2 not finished;"), "\(output)")
        let rerun = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root)
        #expect(rerun.status == 0)
        let summary = try #require(runFinished(rerun.stdout))
        // The finished item runs nothing; the interrupted one resumes.
        #expect(summary["reused"]?.intValue ?? 0 >= 1, "\(summary)")
        #expect(summary["succeeded"]?.intValue ?? 0 >= 1, "\(summary)")
    }

    /// FFmpeg and its ~150 libraries are opened by the first media stage, not at start-up: a run that
    /// only uploads (or `pipeline status`) never maps them.
    @Test func ffmpegIsLoadedOnlyByWorkflowsWithMediaStages() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: repositoryRoot.appendingPathComponent("samples/clip-h264-aac.mp4"), to: scratch.path("in/clip.mp4"))
        let count = #"grep -c libavformat /proc/$PPID/maps > $0.count || true"#
        // Without a media stage, FFmpeg is never opened.
        try scratch.write(
            "plain.json",
            """
            {"version": 1, "name": "plain", "inputs": {"path": "in"}, "stages": [
             {"id": "before", "uses": "exec", "with": {"command": ["sh", "-c", "\(count)", "before"]}}
            ]}
            """)
        let plain = try await Binary.run(["run", "plain.json"], in: scratch.root)
        #expect(plain.status == 0, "\(plain.stdout)\(plain.stderr)")
        #expect(scratch.read("before.count").trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        // With one, it is opened (by the plan's probe of the input) before the stages run.
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "lazy", "inputs": {"path": "in"}, "stages": [
             {"id": "probe", "uses": "ffmpeg.probe"},
             {"id": "after", "uses": "exec", "with": {"command": ["sh", "-c", "\(count)", "after"]}}
            ]}
            """)
        let result = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(Int(scratch.read("after.count").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > 0)
    }

    @Test func theCheckedInSchemaIsWhatTheBinaryGenerates() async throws {
        let result = try await Binary.run(["schema"], in: repositoryRoot)
        let generated = try JSONValue(parsing: result.stdout)
        let checkedIn = try JSONValue(
            parsing: Data(contentsOf: repositoryRoot.appendingPathComponent("Workflows/workflow.schema.json")))
        let same = generated == checkedIn
        #expect(same, "Workflows/workflow.schema.json is out of date: run make schema")
    }

    @Test func stagesListsTypesOptionsAndOutputs() async throws {
        let result = try await Binary.run(["stages", "--json"], in: repositoryRoot)
        let list = try JSONValue(parsing: result.stdout).arrayValue ?? []
        let exec = try #require(list.first { $0["type"] == "exec" })
        #expect(exec["source"] == "built in")
        #expect(exec["options"]?.arrayValue?.contains { $0["name"] == "command" && $0["required"] == true } == true)
        #expect(exec["outputs"]?.arrayValue?.map { $0["name"] } == ["exitCode", "stdout", "stderr"])
    }
}
