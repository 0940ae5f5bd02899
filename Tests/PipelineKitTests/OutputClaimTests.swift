import Foundation
import NIOConcurrencyHelpers
import TestSupport
import Testing

@testable import PipelineKit
@testable import StageKit

/// Two files of one batch whose stage resolves the same `output` (cards' `100/clip0001.mp4` and
/// `101/clip0001.mp4` exported as `out/${input.stem}.mp4`): the first writes it, the second fails before its
/// stage runs, naming the file and the item that has it, and the first's file is left as it made it.
@Suite struct OutputClaimTests {
    @Test(arguments: [1, 2])
    func twoFilesOfABatchNeverWriteTheSameOutput(jobs: Int) async throws {
        let sandbox = try Sandbox(files: 2)
        let output = sandbox.root.appendingPathComponent("out/export.txt").path
        let workflow = """
            {"version": 1, "name": "t", "stages": [
              {"id": "export", "uses": "test.output", "with": {"output": "\(output)", "text": "${input.name}"}}
            ]}
            """
        let log = EventLog()
        let summary = try await sandbox.run(workflow, jobs: jobs, log: log)
        #expect(summary.succeeded == 1 && summary.failed == 1)
        let failures = log.all(StageFinished.self).filter { $0.outcome == .failed }
        #expect(failures.count == 1)
        let message = failures.first?.error?.message ?? ""
        #expect(message.contains("would write \(output)") && message.contains("writes in this batch"), "\(message)")
        #expect(failures.first?.error?.kind == .invalidOptions)
        let winner = log.all(StageFinished.self).first { $0.outcome == .succeeded }?.item ?? ""
        let loser = winner == "file0.txt" ? "file1.txt" : "file0.txt"
        #expect(message.contains(winner) && failures.first?.item == loser, "\(message)")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == winner, "the first file's output stands")
        #expect(OutputWriterStage.writes(output) == 1, "the refused stage never ran")

        // A rerun: the done item keeps its output, the refused one is refused again.
        let rerun = try await sandbox.run(workflow, jobs: jobs)
        #expect(rerun.failed == 1 && rerun.reused == 1)
        #expect(OutputWriterStage.writes(output) == 1)
    }

    @Test func outputsOfTheirOwnRunSideBySide() async throws {
        let sandbox = try Sandbox(files: 3)
        let folder = sandbox.root.appendingPathComponent("out").path
        let workflow = """
            {"version": 1, "name": "t", "stages": [
              {"id": "export", "uses": "test.output", "with": {"output": "\(folder)/${input.stem}.out", "text": "${input.name}"}}
            ]}
            """
        let summary = try await sandbox.run(workflow, jobs: 3)
        #expect(summary.succeeded == 3 && summary.failed == 0)
        // A new version of an item writes its own output again.
        try Data("changed\n".utf8).write(to: URL(fileURLWithPath: sandbox.path(file: 1)))
        let rerun = try await sandbox.run(workflow, jobs: 3)
        #expect(rerun.succeeded == 1 && rerun.reused == 2 && rerun.failed == 0)
    }

    @Test func theClaimedPathIsTheStandardizedOutput() {
        let cwd = FileManager.default.currentDirectoryPath
        #expect(OutputClaims.path(in: .object(["output": .string("out/./a/../clip.mp4")])) == "\(cwd)/out/clip.mp4")
        #expect(OutputClaims.path(in: .object(["file": .string("clip.mp4")])) == nil)
        let claims = OutputClaims()
        #expect(claims.claim("/out/clip.mp4", item: 1, label: "a/clip.mp4") == nil)
        #expect(claims.claim("/out/clip.mp4", item: 1, label: "a/clip.mp4") == nil, "an item's own output")
        #expect(claims.claim("/out/clip.mp4", item: 2, label: "b/clip.mp4")?.label == "a/clip.mp4")
    }
}

/// A stage for tests that writes `text` to its `output` file, as an export does, and counts its writes by path.
struct OutputWriterStage: Stage {
    struct Options: StageOptions {
        @Option("The file to write.") var output: String
        @Option("What to write.") var text: String
    }

    struct Outputs: Encodable, Sendable {
        var path: String
    }

    static let stageType = "test.output"
    static let summary = "Writes its output file (tests only)."
    static let outputSchema = OutputSchema([OutputField("path", "The file.")])

    /// How many times each output path was written.
    static func writes(_ path: String) -> Int {
        ProbeStage.counts.withLockedValue { $0["output:\(path)", default: 0] }
    }

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        ProbeStage.counts.withLockedValue { $0["output:\(options.output)", default: 0] += 1 }
        let url = URL(fileURLWithPath: options.output)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(options.text.utf8).write(to: url)
        return Outputs(path: options.output)
    }
}
