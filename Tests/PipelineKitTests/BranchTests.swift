import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import PipelineKit
@testable import StageKit

/// Branches within an item: stages whose waits are over run at the same time, within the resource limits, and a
/// failed branch stops only what waits for it.
@Suite struct BranchTests {
    /// export → (up1 ∥ up2), two transfers that hold a network slot for a while.
    private func transfers(_ key: String) -> String {
        """
        {"version": 1, "name": "t", "stages": [
          {"id": "export", "uses": "test.probe", "with": {"key": "\(key)-export"}},
          {"id": "up1", "uses": "test.transfer", "after": ["export"], "with": {"key": "\(key)", "seconds": 0.4}},
          {"id": "up2", "uses": "test.transfer", "after": ["export"], "with": {"key": "\(key)", "seconds": 0.4}}
        ]}
        """
    }

    @Test func branchesRunAtTheSameTimeWithinTheResourceLimits() async throws {
        let sandbox = try Sandbox()
        let side = UUID().uuidString
        let log = EventLog()
        #expect(try await sandbox.run(transfers(side), log: log).succeeded == 1)
        #expect(Occupancy.counts.withLockedValue { $0[side]?.peak[.network] } == 2)
        let started = log.all(StageStarted.self)
        #expect(started.filter { $0.stage.hasPrefix("up") }.allSatisfy { $0.after == ["export"] })

        let limited = try Sandbox()
        let single = UUID().uuidString
        #expect(try await limited.run(transfers(single), limits: ResourceLimits([.network: 1])).succeeded == 1)
        #expect(Occupancy.counts.withLockedValue { $0[single]?.peak[.network] } == 1, "--transfers 1 holds")
    }

    @Test func aFailedBranchFailsTheItemWhileTheOthersFinishAndARerunRunsOnlyWhatFailed() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        // `bad` fails the first time only; `join` waits for both branches.
        let workflow = """
            {"version": 1, "name": "t", "defaults": {"retry": {"attempts": 1}}, "stages": [
              {"id": "export", "uses": "test.probe", "with": {"key": "\(key)-export"}},
              {"id": "bad", "uses": "test.probe", "after": ["export"], "with": {"key": "\(key)-bad", "failTimes": 1, "fatal": true}},
              {"id": "good", "uses": "test.probe", "after": ["export"], "with": {"key": "\(key)-good", "sleep": 0.2}},
              {"id": "join", "uses": "test.probe", "after": ["bad", "good"], "with": {"key": "\(key)-join"}}
            ]}
            """
        let log = EventLog()
        let failed = try await sandbox.run(workflow, log: log)
        #expect(failed.failed == 1)
        #expect(log.outcomes("good") == [.succeeded], "the branch that does not need bad runs to its end")
        let skipped = log.all(StageFinished.self).filter { $0.stage == "join" }
        #expect(skipped.map(\.outcome) == [.skipped] && skipped.first?.failedDependency == "bad")
        #expect(skipped.first?.reason == "waits for stage bad, which failed")
        #expect(log.itemErrors.first?.contains("stage bad (test.probe) failed: boom 1") == true, "\(log.itemErrors)")
        #expect(try await sandbox.checkpoint("good")?.status == .succeeded)
        let join = try await sandbox.checkpoint("join")
        #expect(join?.status == .skipped && join?.reason == "waits for stage bad, which failed")

        let rerunLog = EventLog()
        let rerun = try await sandbox.run(workflow, log: rerunLog)
        #expect(rerun.succeeded == 1 && rerun.stagesRun == 2 && rerun.stagesReused == 2)
        #expect(rerunLog.outcomes("export") == [.reused] && rerunLog.outcomes("good") == [.reused])
        #expect(rerunLog.outcomes("bad") == [.succeeded] && rerunLog.outcomes("join") == [.succeeded])
        #expect(ProbeStage.runs("\(key)-good") == 1 && ProbeStage.runs("\(key)-export") == 1)
        #expect(try await sandbox.checkpoint("join")?.reason == nil)
    }

    @Test func changingOneBranchRerunsItAndWhatWaitsForItOnly() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        func workflow(_ value: String) -> String {
            """
            {"version": 1, "name": "t", "stages": [
              {"id": "export", "uses": "test.probe", "with": {"key": "\(key)-export"}},
              {"id": "left", "uses": "test.probe", "after": ["export"], "with": {"key": "\(key)-left", "value": "\(value)"}},
              {"id": "right", "uses": "test.probe", "after": ["export"], "with": {"key": "\(key)-right"}},
              {"id": "after-left", "uses": "test.probe", "after": ["left"], "with": {"key": "\(key)-after-left"}}
            ]}
            """
        }
        try await sandbox.run(workflow("one"))
        try await sandbox.run(workflow("two"))
        #expect(ProbeStage.runs("\(key)-left") == 2 && ProbeStage.runs("\(key)-after-left") == 2)
        #expect(ProbeStage.runs("\(key)-right") == 1 && ProbeStage.runs("\(key)-export") == 1)
    }
}
