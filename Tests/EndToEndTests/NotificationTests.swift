import Foundation
import Notifications
import PipelineKit
import SharedBatch
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `--notify`: a receiver on 127.0.0.1 gets one `batchFinished` per batch outcome (also after a `kill -9` and a
/// rerun of the last item, and not again from a rerun that changes nothing), failed items as they fail, and a
/// receiver that hangs holds up no item.
@Suite(.serialized) struct NotificationTests {
    /// Three items; `c.txt` waits for the test's gate, `bad.txt` fails.
    static let workflow = """
        {"version": 1, "name": "notified", "inputs": {"path": "in"}, "defaults": {"retry": {"attempts": 1}},
         "stages": [
          {"id": "work", "uses": "exec", "with": {"command": ["sh", "-c",
            "case \\"$0\\" in bad*) echo \\"cannot read $0\\" >&2; exit 3;; c*) while [ ! -e go ]; do sleep 0.02; done;; esac",
            "${input.name}"]}}
         ]}
        """

    static func prepare() throws -> Scratch {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        for name in ["a.txt", "bad.txt", "c.txt"] { try scratch.write("in/\(name)", "content of \(name)\n") }
        return scratch
    }

    @Test func oneBatchFinishedAfterAKillAndARerun() async throws {
        let receiver = try await WebhookReceiver.start()
        let scratch = try Self.prepare()
        let notify = ["--notify", receiver.url("/hook/generic") + "#batchFinished,itemFailed"]
        let first = try Binary.start(["run", "wf.json", "--state", "state", "--jobs", "3"] + notify, in: scratch.root)
        let state = scratch.path("state")
        try await waitUntil("the failed item was announced and a.txt is done") {
            guard !receiver.bodies(at: "/hook").filter({ $0["event"] == "itemFailed" }).isEmpty else { return false }
            return await ledgerItemCounts(under: state, workflow: "notified")["succeeded"] == 1
        }
        first.signal(SIGKILL)
        _ = await first.exit()
        #expect(receiver.bodies(at: "/hook").allSatisfy { $0["event"] != "batchFinished" })

        try scratch.write("go", "")
        let rerun = try await Binary.run(["run", "wf.json", "--state", "state"] + notify, in: scratch.root)
        #expect(rerun.status == 1, "bad.txt fails again: \(rerun.stderr)")
        let again = try await Binary.run(["run", "wf.json", "--state", "state"] + notify, in: scratch.root)
        #expect(again.status == 1)
        await receiver.stop()

        let finished = receiver.bodies(at: "/hook").filter { $0["event"] == "batchFinished" }
        #expect(finished.count == 1, "\(finished)")
        let summary = try #require(finished.first)
        #expect(summary["workflow"] == "notified")
        #expect(summary["counts"]?["done"] == 2 && summary["counts"]?["failed"] == 1, "\(summary)")
        #expect(summary["failures"]?.arrayValue?.first?["error"]?.stringValue?.contains("cannot read bad.txt") == true)
        // bad.txt fails in each of the three runs: each run's failure is its own event.
        let failures = receiver.bodies(at: "/hook").filter { $0["event"] == "itemFailed" }
        #expect(failures.count == 3 && failures.allSatisfy { $0["path"] == "bad.txt" }, "\(failures)")
        // The webhook's URL, its secret, is nowhere in the state folder: the ledger names it by a digest.
        for file in try FileManager.default.contentsOfDirectory(atPath: state.path) {
            let bytes = try Data(contentsOf: state.appendingPathComponent(file))
            #expect(bytes.range(of: Data("/hook/generic".utf8)) == nil, "\(file) holds the webhook's URL")
        }
    }

    @Test func aHangingReceiverHoldsUpNothing() async throws {
        let receiver = try await WebhookReceiver.start()
        let scratch = try Self.prepare()
        try scratch.write("go", "")
        let run = try Binary.start(
            [
                "run", "wf.json", "--state", "state", "--json", "--notify",
                receiver.url("/hang") + "#batchFinished,itemFailed",
            ],
            in: scratch.root)
        defer { if run.isRunning { run.signal(SIGKILL) } }
        // Every item finished and the run ended while the receiver still holds the failure's request.
        // The failure's request may still be on its way when the run reports its end; the run then waits for
        // its deliveries at most the grace, so a request that never comes ends the wait too.
        try await waitUntil("the run finished and the receiver holds the failure's request") {
            runFinished(run.stdout.soFar) != nil && (!receiver.bodies(at: "/hang").isEmpty || !run.isRunning)
        }
        #expect(!receiver.bodies(at: "/hang").isEmpty)
        receiver.release()
        #expect(await run.exit() == 1)
        await receiver.stop()
        let summary = try #require(runFinished(run.stdout.soFar))
        #expect(summary["succeeded"] == 2 && summary["failed"] == 1)
    }

    /// A workflow's own `notify`, its URL read from the environment: announced without any flag; without the
    /// variable the run refuses to start.
    @Test func aWorkflowDeclaresItsWebhooks() async throws {
        let receiver = try await WebhookReceiver.start()
        let scratch = try Scratch()
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "declared", "inputs": {"path": "in"},
             "notify": [{"url": "${env.HOOK}", "on": ["batchFinished"], "format": "generic"}],
             "stages": [{"id": "work", "uses": "exec", "with": {"command": ["true"]}}]}
            """)
        try scratch.write("in/a.txt", "a\n")
        let run = try await Binary.run(
            ["run", "wf.json", "--state", "state"], in: scratch.root,
            environment: ["HOOK": receiver.url("/hook/declared")])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let unset = try await Binary.run(["run", "wf.json", "--state", "state"], in: scratch.root)
        #expect(unset.status == 2 && unset.stderr.contains("HOOK"), "\(unset.stderr)")
        await receiver.stop()
        let finished = receiver.bodies(at: "/hook/declared").filter { $0["event"] == "batchFinished" }
        #expect(finished.count == 1 && finished.first?["workflow"] == "declared", "\(finished)")
    }

    @Test func messageShapes() throws {
        let notice = Notice.batchFinished(
            workflow: "archive", counts: ["done": 2, "failed": 1],
            failures: [.init(path: "/m/bad.mov", error: "moov atom not found", errorKind: "invalid-input")])
        let slack = notice.body(for: .slack)
        #expect(slack["text"]?.stringValue?.hasPrefix("Batch archive finished: 2 done, 1 failed") == true)
        #expect(slack["text"]?.stringValue?.contains("/m/bad.mov: moov atom not found") == true)
        #expect(notice.body(for: .discord)["content"] == slack["text"])
        #expect(notice.body(for: .generic)["counts"] == ["done": 2, "failed": 1])

        let parsed = try NotificationTarget.parse("https://hooks.slack.com/services/T/B/X#itemFailed").get()
        #expect(parsed.format == .slack && parsed.events == [.itemFailed])
        #expect(try NotificationTarget.parse("https://discord.com/api/webhooks/1/x").get().format == .discord)
        let generic = try NotificationTarget.parse("http://127.0.0.1:9/hook#format=slack,batchFinished").get()
        #expect(generic.format == .slack && generic.events == [.batchFinished])
        #expect(throws: NotificationTargetError.self) { try NotificationTarget.parse("ftp://x/y").get() }
        #expect(throws: NotificationTargetError.self) { try NotificationTarget.parse("https://x/y#finished").get() }
    }
}
