import Foundation
import NIOConcurrencyHelpers
import TestSupport
import Testing

@testable import PipelineKit
@testable import StageKit

@Suite struct RunnerTests {
    @Test func finishedStagesAreReusedOnARerun() async throws {
        let sandbox = try Sandbox(files: 3)
        let key = UUID().uuidString
        let first = try await sandbox.run(probeWorkflow(key))
        #expect(first.succeeded == 3 && first.stagesRun == 9 && first.stagesReused == 0)
        let log = EventLog()
        let second = try await sandbox.run(probeWorkflow(key), log: log)
        #expect(second.succeeded == 3 && second.stagesRun == 0 && second.stagesReused == 9)
        #expect(ProbeStage.runs("\(key)-c-file1") == 1)
    }

    @Test func changingOneStagesOptionsRerunsItAndTheLaterOnesOnly() async throws {
        let sandbox = try Sandbox(files: 2)
        let key = UUID().uuidString
        try await sandbox.run(probeWorkflow(key))
        let log = EventLog()
        try await sandbox.run(probeWorkflow(key, b: #", "sleep": 0.001"#), log: log)
        #expect(log.outcomes("a") == [.reused, .reused])
        #expect(log.outcomes("b") == [.succeeded, .succeeded])
        #expect(log.outcomes("c") == [.succeeded, .succeeded])
        #expect(ProbeStage.runs("\(key)-a-file0") == 1)
        #expect(ProbeStage.runs("\(key)-c-file0") == 2)
    }

    @Test func invalidationOfLaterStagesSurvivesAFailedRerun() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        try await sandbox.run(probeWorkflow(key))
        // b now fails fatally: c's old checkpoint must not survive, even though c's options did not change.
        let failing = try await sandbox.run(probeWorkflow(key, b: #", "failTimes": 99, "fatal": true"#))
        #expect(failing.failed == 1)
        let log = EventLog()
        try await sandbox.run(probeWorkflow(key), log: log)
        #expect(log.outcomes("c") == [.succeeded])
        #expect(ProbeStage.runs("\(key)-c-file0") == 2)
    }

    @Test func retryableFailuresAreRetriedWithBackoff() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        let log = EventLog()
        let summary = try await sandbox.run(
            probeWorkflow(key, b: #", "failTimes": 2"#, retry: #"{"attempts": 3, "initialDelay": "10ms"}"#), log: log)
        #expect(summary.succeeded == 1)
        #expect(ProbeStage.runs("\(key)-b-file0") == 3)
        let retries = log.all(StageRetrying.self)
        #expect(retries.count == 2)
        #expect(retries.map(\.attempt) == [1, 2])
        #expect(retries.allSatisfy { $0.attempts == 3 && $0.error.kind == .network })
    }

    @Test func fatalFailuresAreNotRetriedAndOtherItemsGoOn() async throws {
        let sandbox = try Sandbox(files: 3)
        let key = UUID().uuidString
        let workflow = """
            {"version": 1, "name": "t", "defaults": {"retry": {"attempts": 5, "initialDelay": "10ms"}}, "stages": [
              {"id": "a", "uses": "test.probe", "with": {"key": "\(key)-${input.stem}", "failTimes": "${input.stem == 'file1' ? 9 : 0}"}}
            ]}
            """
        // The ternary is not part of the language: the workflow is refused before anything runs.
        #expect(throws: WorkflowError.self) { try sandbox.workflow(workflow) }

        let failing = """
            {"version": 1, "name": "t", "defaults": {"retry": {"attempts": 5, "initialDelay": "10ms"}}, "stages": [
              {"id": "a", "uses": "test.probe", "if": "input.stem == 'file1'", "with": {"key": "\(key)-${input.stem}", "failTimes": 9, "fatal": true}},
              {"id": "b", "uses": "test.probe", "with": {"key": "\(key)-b-${input.stem}"}}
            ]}
            """
        let log = EventLog()
        let summary = try await sandbox.run(failing, log: log)
        #expect(summary.succeeded == 2 && summary.failed == 1)
        #expect(ProbeStage.runs("\(key)-file1") == 1)
        #expect(log.outcomes("a").sorted { $0.rawValue < $1.rawValue } == [.failed, .skipped, .skipped])
        #expect(log.itemErrors.first?.contains("stage a (test.probe) failed: boom 1") == true)
    }

    @Test func aStageThatOverrunsItsTimeoutIsCancelled() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        let log = EventLog()
        let summary = try await sandbox.run(
            """
            {"version": 1, "name": "t", "stages": [
              {"id": "slow", "uses": "test.probe", "timeout": "200ms", "retry": {"attempts": 1}, "with": {"key": "\(key)", "sleep": 30}}
            ]}
            """, log: log)
        #expect(summary.failed == 1)
        #expect(log.itemErrors.first?.contains("timed out after 200ms") == true, "\(log.itemErrors)")
        #expect(log.all(StageFinished.self).first?.error?.kind == .timeout)
    }

    @Test func cancellationInterruptsAndTheNextRunResumesWithTheCheckpoint() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        let workflow = """
            {"version": 1, "name": "t", "stages": [
              {"id": "long", "uses": "test.probe", "with": {"key": "\(key)", "sleep": "${vars.sleep}"}}
            ], "vars": {"sleep": 30}}
            """
        let task = Task { try await sandbox.run(workflow) }
        let store = CheckpointStore(folder: sandbox.state)
        let item = try sandbox.items()[0].stateKey
        try await waitUntil("the stage checkpointed") {
            try await store.stage(run: "t", item: item, stage: "long")?.resume == ["step": 1]
        }
        task.cancel()
        let interrupted = try await task.value
        #expect(interrupted.interrupted)
        let record = try await CheckpointStore(folder: sandbox.state).stage(
            run: "t", item: try sandbox.items()[0].stateKey, stage: "long")
        #expect(record?.status == .interrupted)
        #expect(record?.resume == ["step": 1])

        let shorter = workflow.replacingOccurrences(of: "\"sleep\": 30", with: "\"sleep\": 0")
        // Changed vars change the options: the stage reruns from scratch (no resume data).
        try await sandbox.run(shorter)
        let rerun = try await CheckpointStore(folder: sandbox.state).stage(
            run: "t", item: try sandbox.items()[0].stateKey, stage: "long")
        #expect(rerun?.status == .succeeded)
        #expect(rerun?.outputs?["resumed"] == nil)
    }

    @Test func anInterruptedStageGetsItsResumeDataBack() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        let workflow = """
            {"version": 1, "name": "t", "stages": [
              {"id": "long", "uses": "test.probe", "with": {"key": "\(key)", "failTimes": 1, "fatal": true}}
            ]}
            """
        // First run fails before checkpointing; write resume data by hand as a crashed stage would have.
        try await sandbox.run(workflow)
        let store = CheckpointStore(folder: sandbox.state)
        let item = try sandbox.items()[0].stateKey
        var record = try #require(try await store.stage(run: "t", item: item, stage: "long"))
        record.status = .running
        record.resume = ["uploadURL": "https://example/upload/1", "offset": 1024]
        try await store.save(record, run: "t", item: item)
        try await sandbox.run(workflow)
        let finished = try await store.stage(run: "t", item: item, stage: "long")
        #expect(finished?.status == .succeeded)
        #expect(finished?.outputs?["resumed"] == ["uploadURL": "https://example/upload/1", "offset": 1024])
    }

    @Test func aFalseConditionSkipsTheStage() async throws {
        let sandbox = try Sandbox(files: 2)
        let key = UUID().uuidString
        let log = EventLog()
        try await sandbox.run(
            """
            {"version": 1, "name": "t", "stages": [
              {"id": "only1", "uses": "test.probe", "if": "${input.stem == 'file1'}", "with": {"key": "\(key)-${input.stem}", "value": 7}},
              {"id": "after", "uses": "test.probe", "with": {"key": "\(key)-after-${input.stem}", "value": "${only1.value ?? 'none'}"}}
            ]}
            """, log: log)
        #expect(ProbeStage.runs("\(key)-file0") == 0)
        #expect(ProbeStage.runs("\(key)-file1") == 1)
        let store = CheckpointStore(folder: sandbox.state)
        let items = try sandbox.items()
        #expect(try await store.stage(run: "t", item: items[0].stateKey, stage: "after")?.outputs?["value"] == "none")
        #expect(try await store.stage(run: "t", item: items[1].stateKey, stage: "after")?.outputs?["value"] == 7)
    }

    @Test func secretsNeverReachStateFilesAndRotatingThemRerunsNothing() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        let workflow = """
            {"version": 1, "name": "t", "vars": {"token": "${env.API_TOKEN}"}, "stages": [
              {"id": "a", "uses": "test.probe", "with": {"key": "\(key)", "value": "Bearer ${vars.token}"}},
              {"id": "b", "uses": "test.probe", "with": {"key": "\(key)-b", "value": "${a.value}"}}
            ]}
            """
        let log = EventLog()
        try await sandbox.run(workflow, environment: ["API_TOKEN": "tok-AAAA-1111"], log: log)
        let files = try FileManager.default.subpathsOfDirectory(atPath: sandbox.state.path)
        for file in files {
            let text =
                (try? String(contentsOfFile: sandbox.state.appendingPathComponent(file).path, encoding: .utf8)) ?? ""
            #expect(!text.contains("tok-AAAA-1111"), "secret in \(file)")
        }
        let rerun = EventLog()
        let summary = try await sandbox.run(workflow, environment: ["API_TOKEN": "tok-BBBB-2222"], log: rerun)
        // Neither a (token in its options) nor b (token in an output it reads) reruns: hashes see expressions.
        #expect(summary.stagesReused == 2)
        #expect(ProbeStage.runs("\(key)") == 1 && ProbeStage.runs("\(key)-b") == 1)
    }

    @Test func aTornStateFileIsReportedNotReset() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        try await sandbox.run(probeWorkflow(key))
        let store = CheckpointStore(folder: sandbox.state)
        let file = store.stageFile(run: "t", item: try sandbox.items()[0].stateKey, stage: "b")
        let bytes = try Data(contentsOf: file)
        let torn = bytes.prefix(bytes.count / 2)
        try torn.write(to: file)
        let log = EventLog()
        let summary = try await sandbox.run(probeWorkflow(key), log: log)
        #expect(summary.failed == 1)
        let message = try #require(log.itemErrors.first)
        #expect(message.contains(file.path))
        #expect(message.contains("damaged"))
        #expect(message.contains("--fresh"))
        #expect(try Data(contentsOf: file) == torn)
        #expect(ProbeStage.runs("\(key)-b-file0") == 1)
    }

    @Test func aChangedInputRunsAllItsStagesAgain() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        try await sandbox.run(probeWorkflow(key))
        try Data("changed content, longer\n".utf8).write(to: sandbox.root.appendingPathComponent("in/file0.txt"))
        let summary = try await sandbox.run(probeWorkflow(key))
        #expect(summary.stagesRun == 3)
    }

    @Test func expiredCredentialsAreRenewedWithRefreshWithAndSecretOutputsAreNeverStored() async throws {
        let sandbox = try Sandbox()
        let workflow = """
            {"version": 1, "name": "t", "stages": [
              {"id": "token", "uses": "test.token", "secret": true},
              {"id": "upload", "uses": "test.guarded", "refreshWith": "token", "with": {"token": "${token.token}", "rotateFirst": true}}
            ]}
            """
        let log = EventLog()
        let summary = try await sandbox.run(workflow, log: log)
        #expect(summary.succeeded == 1, "\(log.itemErrors)")
        #expect(TokenService.guardedRuns.withLockedValue { $0 } == 2)
        for file in try FileManager.default.subpathsOfDirectory(atPath: sandbox.state.path) {
            let text =
                (try? String(contentsOfFile: sandbox.state.appendingPathComponent(file).path, encoding: .utf8)) ?? ""
            #expect(!text.contains("token-"), "secret in \(file)")
        }
        // A rerun: the secret stage runs again (its outputs were never stored); the guarded stage is reused.
        let rerun = try await sandbox.run(workflow)
        #expect(rerun.stagesRun == 1 && rerun.stagesReused == 1)

        let without = workflow.replacingOccurrences(of: #""refreshWith": "token", "#, with: "").replacingOccurrences(
            of: "\"t\"", with: "\"u\"")
        TokenService.guardedRuns.withLockedValue { $0 = 0 }
        let failing = EventLog()
        let failed = try await sandbox.run(without, log: failing)
        #expect(failed.failed == 1)
        #expect(failing.itemErrors.first?.contains("give the stage refreshWith") == true)
    }

    @Test func refreshWithMustNameAnEarlierStage() throws {
        let sandbox = try Sandbox()
        #expect(throws: WorkflowError.self) {
            try sandbox.workflow(
                #"{"version": 1, "stages": [{"id": "a", "uses": "test.token", "refreshWith": "b"}, {"id": "b", "uses": "test.token"}]}"#
            )
        }
    }
}
