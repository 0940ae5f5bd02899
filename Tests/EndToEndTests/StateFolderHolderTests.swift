import Foundation
import PipelineKit
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Who holds a state folder, as a dashboard's retry reads it from the lock file: only a live `pipeline watch` runs a
/// retried item at once. A `pipeline run` holding the folder, a watch that was killed (its lock file still names it),
/// and a holder that wrote the older one-line lock file (its pid alone) all leave the item queued for the next run.
@Suite(.serialized) struct StateFolderHolderTests {
    /// `check` fails until `flags/NAME` exists; for hold.txt it first waits until the file `release` exists.
    static let workflow = """
        {"version": 1, "name": "retry", "inputs": {"path": "in"}, "defaults": {"retry": {"attempts": 1}},
         "stages": [
          {"id": "check", "uses": "exec", "with": {"command": ["sh", "-c",
            "while [ \\"$0\\" = hold.txt ] && [ ! -e release ]; do sleep 0.05; done; echo \\"$0\\" >> checked.log; [ -e \\"flags/$0\\" ] || { echo \\"no flag for $0\\" >&2; exit 3; }",
            "${input.name}"]}}
         ]}
        """
    static let queued = "queued for the next pipeline run"

    /// A `pipeline run` still running (hold.txt waits) holds the folder: late.txt's retry is queued, the run is not
    /// signalled, and the next run takes late.txt up.
    @Test func aFolderHeldByARunQueuesTheRetryForTheNextRun() async throws {
        let scratch = try Scratch()
        let state = scratch.path("state")
        try scratch.write("wf.json", Self.workflow)
        for name in ["hold.txt", "late.txt"] { try scratch.write("in/\(name)", "content of \(name)\n") }
        try scratch.write("flags/hold.txt", "")
        let run = try Binary.start(["run", "wf.json", "--state", "state", "--jobs", "2"], in: scratch.root)
        defer { if run.isRunning { run.signal(SIGKILL) } }
        try await waitUntil("late.txt failed while hold.txt runs", every: .milliseconds(50)) {
            await ledgerItemCounts(under: state, workflow: "retry") == ["pending": 1, "failed": 1]
        }
        _ = try await retryOfLateIsQueued(in: scratch, state: state, flagging: true)
        try scratch.write("release", "")
        #expect(await run.exit() != 0, "the run ends with late.txt failed: \(run.stderr.soFar)")
        #expect(await ledgerItemCounts(under: state, workflow: "retry") == ["succeeded": 1, "failed": 1])
        #expect(StateFolderRetryTests.prepared(scratch, log: "checked.log") == ["hold.txt", "late.txt"])

        let next = try await Binary.run(["run", "wf.json", "--state", "state"], in: scratch.root)
        #expect(next.status == 0, "\(next.stderr)")
        #expect(await ledgerItemCounts(under: state, workflow: "retry") == ["succeeded": 2])
    }

    /// A watch killed with SIGKILL leaves its lock file (`PID`, `watch retry`), but no lock: the retry is queued, and
    /// a new run takes the folder and the item.
    @Test func aKilledWatchsLockFileIsNoLiveHolder() async throws {
        let scratch = try Scratch()
        let state = scratch.path("state")
        try scratch.write("wf.json", Self.workflow)
        try scratch.write("in/late.txt", "content\n")
        let watch = try Binary.start(["watch", "wf.json", "--state", "state", "--settle", "1s"], in: scratch.root)
        defer { if watch.isRunning { watch.signal(SIGKILL) } }
        try await waitUntil("the watch's first pass", every: .milliseconds(50)) {
            await ledgerItemCounts(under: state, workflow: "retry") == ["failed": 1]
        }
        watch.signal(SIGKILL)
        _ = await watch.exit()
        #expect(scratch.read("state/lock").hasSuffix("\nwatch retry\n"), "the lock file still names the watch")
        _ = try await retryOfLateIsQueued(in: scratch, state: state, flagging: true)
        let next = try await Binary.run(["run", "wf.json", "--state", "state"], in: scratch.root)
        #expect(next.status == 0, "\(next.stderr)")
        #expect(await ledgerItemCounts(under: state, workflow: "retry") == ["succeeded": 1])
    }

    /// A holder that wrote its pid alone (an older `pipeline`'s lock file; here this test holds the lock) is a live
    /// holder that runs no retry: the retry is queued, and a run is refused naming that pid.
    @Test func anOldOneLineLockFileStillNamesItsHolder() async throws {
        let scratch = try Scratch()
        let state = scratch.path("state")
        try scratch.write("wf.json", Self.workflow)
        try scratch.write("in/late.txt", "content\n")
        let first = try await Binary.run(["run", "wf.json", "--state", "state"], in: scratch.root)
        #expect(first.status != 0, "late.txt fails: no flag")
        let descriptor = open(scratch.path("state/lock").path, O_RDWR | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        try #require(flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        let line = Array("\(getpid())\n".utf8)
        #expect(ftruncate(descriptor, 0) == 0 && pwrite(descriptor, line, line.count, 0) == line.count)
        let late = try await retryOfLateIsQueued(in: scratch, state: state, flagging: false)
        let refused = try await Binary.run(["run", "wf.json", "--state", "state"], in: scratch.root)
        #expect(refused.status != 0 && refused.stderr.contains("in use by another pipeline process (pid \(getpid()))"))
        let reader = try SQLiteLedger(readingOnly: state)
        #expect(try await reader.retryRequests(workflow: "retry").keys.sorted() == [late], "left for the next run")
        try reader.close()
    }

    /// Serves the state folder and asks for late.txt's retry (after giving it the flag it needs to succeed, when
    /// `flagging`), which is answered as queued for the next run; late.txt's id.
    private func retryOfLateIsQueued(in scratch: borrowing Scratch, state: URL, flagging: Bool) async throws -> Int64 {
        let served = try await ServedDashboard.start(
            ["--state", "state"], in: scratch.root, environment: ["PIPELINE_SERVE_TOKEN": StateFolderRetryTests.token])
        defer { served.process.signal(SIGKILL) }
        let late = try #require(await StateFolderRetryTests.ids(under: state)["late.txt"])
        if flagging { try scratch.write("flags/late.txt", "") }
        let (status, answer) = try await served.request(
            "/api/items/\(late)/retry", method: "POST", bearer: StateFolderRetryTests.token)
        #expect(status == 202 && answer["outcome"]?.stringValue == Self.queued, "\(answer)")
        return late
    }
}
