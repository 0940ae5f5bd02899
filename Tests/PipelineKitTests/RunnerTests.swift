import Foundation
import NIOConcurrencyHelpers
import StageRuntime
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
        // Done items with an unchanged workflow are not even looked at stage by stage.
        #expect(second.reused == 3 && second.stagesRun == 0 && log.finished.isEmpty)
        // After an edit that leaves these stages' options alone, each stage is checked and reused.
        let edited = probeWorkflow(key).replacingOccurrences(
            of: #""name": "t","#, with: #""name": "t", "vars": {"unused": 1},"#)
        let third = try await sandbox.run(edited)
        #expect(third.succeeded == 3 && third.stagesRun == 0 && third.stagesReused == 9)
        #expect(ProbeStage.runs("\(key)-c-file1") == 1)
    }

    /// A stage whose output file is gone runs again before its checkpoint is reused (a worker on another machine
    /// cannot see what the first one made); the stages after it stand when it makes the same bytes, and run again
    /// when it does not.
    @Test func aMissingOutputFileIsMadeAgainAndLaterStagesStandIfItIsTheSame() async throws {
        let sandbox = try Sandbox()
        for vary in [false, true] {
            let key = UUID().uuidString
            let file = sandbox.root.appendingPathComponent("made-\(vary).txt").path
            func workflow(_ edit: Int) -> String {
                """
                {"version": 1, "name": "t", "vars": {"edit": \(edit)}, "stages": [
                  {"id": "make", "uses": "test.file", "with": {"path": "\(file)", "key": "\(key)-make", "vary": \(vary)}},
                  {"id": "use", "uses": "test.probe", "with": {"key": "\(key)-use", "value": "${make.path}"}}
                ]}
                """
            }
            try await sandbox.run(workflow(1))
            #expect(try await sandbox.checkpoint("make")?.files?.keys.first == file)
            try FileManager.default.removeItem(atPath: file)
            // An edit that leaves the stages' options alone: each stage's checkpoint is checked.
            let log = EventLog()
            let rerun = try await sandbox.run(workflow(2), log: log)
            #expect(rerun.succeeded == 1)
            #expect(log.outcomes("make") == [.succeeded], "the missing file is made again")
            #expect(ProbeStage.runs("\(key)-make") == 2)
            #expect(ProbeStage.runs("\(key)-use") == (vary ? 2 : 1), "vary: \(vary)")
            #expect(FileManager.default.fileExists(atPath: file))
        }
    }

    @Test func aRunnerThatKeepsOnlyFailuresStillCountsEveryFile() async throws {
        let sandbox = try Sandbox(files: 3)
        let key = UUID().uuidString
        let kept = try await sandbox.outcome(probeWorkflow(key))
        #expect(kept.results.map(\.outcome) == [.done, .done, .done])
        let reused = try await sandbox.outcome(probeWorkflow(key), keepsEveryResult: false)
        #expect(reused.summary.reused == 3 && reused.results.isEmpty)
        let failing = probeWorkflow(UUID().uuidString, b: #", "failTimes": 1, "fatal": true"#)
        let failed = try await sandbox.outcome(failing, keepsEveryResult: false)
        #expect(failed.summary.failed == 3 && failed.results.map(\.outcome) == [.failed, .failed, .failed])
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

    @Test func aStageThatRetriesItselfIsRunOnceAndItsRetriesAreTheRunsEvents() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        let log = EventLog()
        let summary = try await sandbox.run(
            """
            {"version": 1, "name": "t", "stages": [
              {"id": "up", "uses": "test.selfRetrying", "with": {"key": "\(key)"}, "retry": {"attempts": 4}}
            ]}
            """, log: log)
        #expect(summary.failed == 1)
        // One policy, one owner: the engine does not wrap the stage's own retries in its attempts.
        #expect(SelfRetryingStage.runs.withLockedValue { $0[key] } == 1)
        let retries = log.all(StageRetrying.self)
        #expect(retries.map(\.attempt) == [1, 2, 3])
        #expect(retries.allSatisfy { $0.attempts == 4 && $0.stage == "up" && $0.error.kind == .network })
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
        try await waitUntil("the stage checkpointed") {
            try await sandbox.checkpoint("long")?.resume == ["step": 1]
        }
        task.cancel()
        let interrupted = try await task.value
        #expect(interrupted.interrupted)
        let record = try await sandbox.checkpoint("long")
        #expect(record?.status == .interrupted)
        #expect(record?.resume == ["step": 1])

        let shorter = workflow.replacingOccurrences(of: "\"sleep\": 30", with: "\"sleep\": 0")
        // Changed vars change the options: the stage reruns from scratch (no resume data).
        try await sandbox.run(shorter)
        let rerun = try await sandbox.checkpoint("long")
        #expect(rerun?.status == .succeeded)
        #expect(rerun?.outputs?["resumed"] == nil)
    }

    /// A stop that lands once an item has ended interrupts the run only when items are left that never
    /// started: Ctrl-C just after a `watch` pass or a run finished its last item is a clean stop.
    @Test(arguments: [1, 2])
    func aStopAfterTheLastItemEndedIsNotAnInterruption(files: Int) async throws {
        let sandbox = try Sandbox(files: files)
        let key = UUID().uuidString
        let runTask = NIOLockedValueBox<Task<RunSummary, any Error>?>(nil)
        let stops = NIOLockedValueBox(0)
        // Cancels the run when its first item ends, as a Ctrl-C at that moment does.
        let stopper = EventLog { event in
            guard event is ItemFinished else { return }
            let first = stops.withLockedValue { count in
                count += 1
                return count == 1
            }
            guard first else { return }
            runTask.withLockedValue { $0 }?.cancel()
        }
        let (gate, opened) = AsyncStream<Void>.makeStream()
        let task = Task {
            for await _ in gate { break }
            return try await sandbox.run(
                """
                {"version": 1, "name": "t", "stages": [
                  {"id": "a", "uses": "test.probe", "with": {"key": "\(key)-${input.stem}"}}
                ]}
                """, log: stopper)
        }
        runTask.withLockedValue { $0 = task }
        opened.yield()
        let summary = try await task.value
        #expect(stops.withLockedValue { $0 } == 1)
        #expect(summary.succeeded == 1)
        #expect(summary.interrupted == (files > 1), "one of \(files) items ran before the stop")
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
        let item = try #require(try await sandbox.item())
        var record = try #require(try await sandbox.checkpoint("long"))
        record.status = .running
        record.resume = ["uploadURL": "https://example/upload/1", "offset": 1024]
        try await sandbox.ledger().save(record, for: item.current)
        try await sandbox.run(workflow)
        let finished = try await sandbox.checkpoint("long")
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
        #expect(try await sandbox.checkpoint("after", file: 0)?.outputs?["value"] == "none")
        #expect(try await sandbox.checkpoint("after", file: 1)?.outputs?["value"] == 7)
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
        #expect(try await sandbox.checkpoint("a")?.status == .succeeded)
        for (file, bytes) in try sandbox.stateBytes() {
            #expect(bytes.range(of: Data("tok-AAAA-1111".utf8)) == nil, "secret in \(file)")
        }
        let rerun = EventLog()
        // A third stage makes the run check a and b one by one.
        let extended = workflow.replacingOccurrences(
            of: #""value": "${a.value}"}}"#,
            with: #""value": "${a.value}"}}, {"id": "c", "uses": "test.probe", "with": {"key": "\#(key)-c"}}"#)
        let summary = try await sandbox.run(extended, environment: ["API_TOKEN": "tok-BBBB-2222"], log: rerun)
        // Neither a (token in its options) nor b (token in an output it reads) reruns: hashes see expressions.
        #expect(summary.stagesReused == 2 && summary.stagesRun == 1)
        #expect(ProbeStage.runs("\(key)") == 1 && ProbeStage.runs("\(key)-b") == 1)
    }

    @Test func aDamagedLedgerIsReportedNotReset() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        try await sandbox.run(probeWorkflow(key))
        let file = sandbox.state.appendingPathComponent(SQLiteLedger.fileName)
        var bytes = try Data(contentsOf: file)
        bytes.replaceSubrange(0..<64, with: Data(repeating: 0x5A, count: 64))
        try bytes.write(to: file)
        let error = try await #require(throws: StateError.self) { try await sandbox.run(probeWorkflow(key)) }
        #expect(error.code == .corrupt)
        #expect(error.message.contains(file.path))
        #expect(error.message.contains("damaged"))
        #expect(error.message.contains("--fresh"))
        #expect(try Data(contentsOf: file) == bytes)
        #expect(ProbeStage.runs("\(key)-b-file0") == 1)
    }

    @Test func renamedTouchedOrCopiedContentIsDoneAndChangedContentIsANewVersion() async throws {
        let sandbox = try Sandbox(files: 2)
        let key = UUID().uuidString
        let workflow = """
            {"version": 1, "name": "t", "stages": [
              {"id": "a", "uses": "test.probe", "with": {"key": "\(key)-${input.name}", "value": "${input.name}"}},
              {"id": "b", "uses": "test.probe", "with": {"key": "\(key)-b", "value": "${previous.a.value ?? 'first'}"}}
            ]}
            """
        try await sandbox.run(workflow)
        let manager = FileManager.default
        try manager.moveItem(
            atPath: sandbox.path(file: 0), toPath: sandbox.root.appendingPathComponent("in/renamed.txt").path)
        try manager.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: sandbox.path(file: 1))
        let log = EventLog()
        let again = try await sandbox.run(workflow, log: log)
        #expect(again.reused == 2 && again.stagesRun == 0, "\(log.all(ItemFinished.self).map(\.fields))")
        let renamed = try #require(log.all(ItemFinished.self).first { $0.item == "renamed.txt" })
        #expect(renamed.reason?.contains("file0.txt") == true)

        try Data("item 1, edited\n".utf8).write(to: URL(fileURLWithPath: sandbox.path(file: 1)))
        let edited = try await sandbox.run(workflow)
        #expect(edited.succeeded == 1 && edited.reused == 1 && edited.stagesRun == 2)
        let item = try #require(try await sandbox.item(file: 1))
        #expect(item.version == 2)
        #expect(try await sandbox.checkpoint("b", file: 1)?.outputs?["value"] == "file1.txt")
    }

    @Test func previousOutputsComeFromTheLatestVersionThatFinishedTheStage() async throws {
        let sandbox = try Sandbox(files: 1)
        let key = UUID().uuidString
        // Stage a fails the first time for each content (its key holds the size), then succeeds.
        let workflow = """
            {"version": 1, "name": "t", "defaults": {"retry": {"attempts": 1}}, "stages": [
              {"id": "a", "uses": "test.probe", "with": {"key": "\(key)-${input.size}", "failTimes": 1, "fatal": true,
                "value": "content of ${input.size} bytes"}},
              {"id": "b", "uses": "test.probe", "with": {"key": "\(key)-b", "value": "${previous.a.value ?? 'first'}"}}
            ]}
            """
        let file = URL(fileURLWithPath: sandbox.path(file: 0))
        func write(_ size: Int) throws { try Data(repeating: 0x61, count: size).write(to: file) }
        try write(10)
        _ = try await sandbox.run(workflow)
        #expect(try await sandbox.run(workflow).succeeded == 1)
        #expect(try await sandbox.checkpoint("b")?.outputs?["value"] == "first")
        try write(20)
        #expect(try await sandbox.run(workflow).failed == 1)
        try write(30)
        #expect(try await sandbox.run(workflow).failed == 1)
        #expect(try await sandbox.run(workflow).succeeded == 1)
        #expect(try await sandbox.item(file: 0)?.version == 3)
        // Version 2 never finished a: version 3 sees version 1's outputs.
        #expect(try await sandbox.checkpoint("b")?.outputs?["value"] == "content of 10 bytes")
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
        #expect(try await sandbox.checkpoint("upload")?.status == .succeeded)
        for (file, bytes) in try sandbox.stateBytes() {
            #expect(bytes.range(of: Data("token-".utf8)) == nil, "secret in \(file)")
        }
        // A rerun of the done item runs nothing, not even the secret stage.
        let rerun = try await sandbox.run(workflow)
        #expect(rerun.reused == 1 && rerun.stagesRun == 0)

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

    @Test func resourceLimitsKeepEncodesApartWithoutHoldingUploadsBack() async throws {
        let sandbox = try Sandbox(files: 6)
        let key = UUID().uuidString
        let summary = try await sandbox.run(
            """
            {"version": 1, "name": "t", "stages": [
              {"id": "encode", "uses": "test.cpu", "with": {"key": "\(key)"}},
              {"id": "upload", "uses": "test.transfer", "with": {"key": "\(key)", "seconds": 0.15}}
            ]}
            """, jobs: 6, limits: ResourceLimits([.cpu: 1, .network: 2]))
        #expect(summary.succeeded == 6)
        let counts = try #require(Occupancy.counts.withLockedValue { $0[key] })
        #expect(counts.peak[.cpu] == 1)
        #expect(counts.peak[.network] == 2)
        // Uploads of finished encodes went on while the next encode ran.
        #expect(counts.overlapped)
    }

    @Test func runnersGivenTheSameSlotsHoldTheLimitsTogether() async throws {
        let first = try Sandbox(files: 3)
        let second = try Sandbox(files: 3)
        let key = UUID().uuidString
        let workflow = """
            {"version": 1, "name": "t", "stages": [
              {"id": "encode", "uses": "test.cpu", "with": {"key": "\(key)", "seconds": 0.1}}
            ]}
            """
        let slots = ResourceSlots(ResourceLimits([.cpu: 1]))
        async let one = first.outcome(workflow, jobs: 3, slots: slots)
        async let two = second.outcome(workflow, jobs: 3, slots: slots)
        let (a, b) = try await (one, two)
        #expect(a.summary.succeeded == 3 && b.summary.succeeded == 3)
        let counts = try #require(Occupancy.counts.withLockedValue { $0[key] })
        #expect(counts.peak[.cpu] == 1, "two runners with their own slots would encode two at once")
        #expect(slots.limits == ResourceLimits([.cpu: 1]))
    }

    @Test func aStageMayGiveUpItsSlotWhileItWaitsAndTakesItBackAfter() async throws {
        let slots = ResourceSlots(ResourceLimits([.cpu: 1]))
        let others = NIOLockedValueBox(0)
        try await slots.holding(.cpu) { slot in
            let slot = try #require(slot, "a limited resource gives its stage a slot")
            try await slot.released {
                // Another job of the machine takes the slot while the stage waits.
                let other = Task { try await slots.withSlot(.cpu) { others.withLockedValue { $0 += 1 } } }
                try await waitUntil("another job used the given-up slot", limit: .seconds(10)) {
                    others.withLockedValue { $0 } == 1
                }
                try await other.value
            }
            #expect(slots.available(.cpu) == 0, "the slot is taken back")
        }
        #expect(slots.available(.cpu) == 1, "the slot is given back once, when the stage ends")
        #expect(try await slots.withSlot(.cpu) { true }, "the slot is free once the stage ended")
        try await slots.holding(.network) { slot in #expect(slot == nil, "a resource without a limit has no slot") }
    }

    @Test func editingASidecarRerunsOnlyTheStagesThatUseIt() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        let sidecar = sandbox.root.appendingPathComponent("in/file0.txt.json")
        try Data(#"{"title": "First"}"#.utf8).write(to: sidecar)
        let workflow = """
            {"version": 1, "name": "t", "stages": [
              {"id": "upload", "uses": "test.probe", "with": {"key": "\(key)-upload", "value": "${input.name}"}},
              {"id": "metadata", "uses": "test.probe", "with": {"key": "\(key)-metadata", "value": "${input.meta.title}"}}
            ]}
            """
        try await sandbox.run(workflow)
        try Data(#"{"title": "Second"}"#.utf8).write(to: sidecar)
        let log = EventLog()
        let summary = try await sandbox.run(workflow, log: log)
        #expect(summary.succeeded == 1 && summary.stagesReused == 1 && summary.stagesRun == 1)
        #expect(ProbeStage.runs("\(key)-upload") == 1 && ProbeStage.runs("\(key)-metadata") == 2)
        #expect(try await sandbox.checkpoint("metadata")?.outputs?["value"] == "Second")
        // Unchanged since: nothing runs.
        let idle = try await sandbox.run(workflow)
        #expect(idle.reused == 1 && idle.stagesRun == 0)
    }
}
