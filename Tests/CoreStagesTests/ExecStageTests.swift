import Foundation
import StageKit
import TestSupport
import Testing

@testable import CoreStages

@Suite struct ExecStageTests {
    let harness = StageHarness(
        stateFolder: FileManager.default.temporaryDirectory.appendingPathComponent("exec-\(UUID().uuidString)"))

    @Test func jsonOnStdoutBecomesOutputs() async throws {
        let result = await harness.run(
            ExecStage.self, options: ["command": ["sh", "-c", #"echo '{"width": 1280, "name": "a b"}'"#]])
        let outputs = try result.outputs.get()
        #expect(outputs["exitCode"] == 0)
        #expect(outputs["stdout"] == ["width": 1280, "name": "a b"])
    }

    @Test func plainStdoutIsTextAndTheEnvironmentIsInheritedAndExtended() async throws {
        setenv("PIPELINE_TEST_INHERITED", "yes", 1)
        let result = await harness.run(
            ExecStage.self,
            options: [
                "command": ["sh", "-c", "echo $PIPELINE_TEST_INHERITED-$EXTRA; pwd"], "env": ["EXTRA": "more"],
                "cwd": "/tmp",
            ])
        #expect(try result.outputs.get()["stdout"] == "yes-more\n/tmp")
    }

    @Test func aNonzeroExitFailsWithStderrInTheMessage() async {
        let result = await harness.run(
            ExecStage.self, options: ["command": ["sh", "-c", "echo starting; echo 'disk on fire' >&2; exit 3"]])
        #expect(throws: StageFailure.self) { try result.outputs.get() }
        if case .failure(let error as StageFailure) = result.outputs {
            #expect(error.message == "sh exited with status 3: disk on fire")
            #expect(error.disposition.isRetryable)
        }
        let fatal = await harness.run(ExecStage.self, options: ["command": ["false"], "retryable": false])
        if case .failure(let error as StageFailure) = fatal.outputs {
            #expect(!error.disposition.isRetryable)
        } else {
            Issue.record("false succeeded")
        }
    }

    @Test func aMissingProgramIsAClearError() async {
        let result = await harness.run(ExecStage.self, options: ["command": ["no-such-program-here"]])
        guard case .failure(let error) = result.outputs else {
            Issue.record("it ran")
            return
        }
        #expect("\(error)" == "program no-such-program-here not found on PATH")
    }

    /// Cancelled once the child has started, the stage ends with a cancellation, and the shell never reaches the
    /// command after its 30-second sleep: the child's whole process group was stopped, not waited for.
    @Test func cancellingKillsTheChild() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("exec-cancel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let started = folder.appendingPathComponent("started")
        let finished = folder.appendingPathComponent("finished")
        let harness = self.harness
        let task = Task {
            await harness.run(
                ExecStage.self,
                options: [
                    "command": ["sh", "-c", .string("touch \(started.path); sleep 30; touch \(finished.path)")]
                ])
        }
        try await waitUntil("the child started") { FileManager.default.fileExists(atPath: started.path) }
        task.cancel()
        let result = await task.value
        #expect(throws: CancellationError.self) { try result.outputs.get() }
        #expect(!FileManager.default.fileExists(atPath: finished.path))
    }

    /// A program that runs past its `timeLimit` is stopped, its whole process group with it, and the stage fails
    /// saying so (retryable, as the command's other failures are); the default limit is six hours.
    @Test func aProgramPastItsTimeLimitIsStopped() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("exec-limit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let finished = folder.appendingPathComponent("finished")
        let result = await harness.run(
            ExecStage.self,
            options: ["command": ["sh", "-c", .string("sleep 30; touch \(finished.path)")], "timeLimit": "300ms"])
        #expect(throws: StageFailure.self) { try result.outputs.get() }
        if case .failure(let error as StageFailure) = result.outputs {
            #expect(error.message == "sh ran longer than its timeLimit of 300ms and was stopped", "\(error.message)")
            #expect(error.disposition.isRetryable)
        }
        #expect(!FileManager.default.fileExists(atPath: finished.path))
        #expect(ExecStage.Options().timeLimit == TimeSpan(seconds: 6 * 3600))
    }

    /// The end of stderr that is logged starts at a whole line, also when the cut falls right at a line's start, and
    /// a single long line is cut where a character starts.
    @Test func theLoggedEndOfStderrStartsAtALineOrACharacter() {
        let limit = ExecStage.stderrLogged
        let first = String(repeating: "a", count: limit - "\nlast\n".utf8.count)
        #expect(ExecStage.tail(of: Data("cut off\n\(first)\nlast\n".utf8)) == [first, "last"])
        #expect(ExecStage.tail(of: Data("half a line \(first)\n \n last \n".utf8)) == ["last"])
        let euros = String(repeating: "€", count: limit)
        #expect(ExecStage.tail(of: Data(euros.utf8)) == [String(repeating: "€", count: limit / 3)])
    }

    @Test func largeOutputIsReadWithoutDeadlock() async throws {
        let result = await harness.run(
            ExecStage.self,
            options: ["command": ["sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x; head -c 200000 /dev/zero >&2"]])
        let stdout = try result.outputs.get()["stdout"]?.stringValue ?? ""
        #expect(stdout.count == 3_000_000)
    }
}
