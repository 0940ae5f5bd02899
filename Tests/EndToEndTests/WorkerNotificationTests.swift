import Foundation
import SharedBatch
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a worker's `--notify` announces: an item it stopped because the database was gone is not a failure, and
/// a failed item is announced under its own workflow's name.
@Suite(.serialized) struct WorkerNotificationTests {
    /// The database stopped for longer than the lease while the worker holds an item: the worker stops the item,
    /// which is not failed (no `✗`, no `itemFailed`), and once the database is back the item is done and the batch
    /// announced once, under its workflow's name.
    @Test func aDatabaseGoneForALeaseFailsNothing() async throws {
        let batch = try await SharedBatch(items: 1, stageSeconds: nil)
        defer { batch.killAll() }
        let receiver = try await WebhookReceiver.start()
        let worker = try batch.startWorker(
            extra: ["--notify", receiver.url("/hook/outage") + "#batchFinished,itemFailed"])
        try await waitUntil("the worker started stage a") {
            batch.effects().contains { $0.kind == "start" && $0.worker == worker.pid }
        }
        try await batch.server.stop()
        try await waitUntil("the worker stopped its item for want of the database") {
            worker.stdout.soFar.contains("no contact with the database")
        }
        try await batch.server.restart()
        try batch.release()
        try await batch.waitUntilDone(1)
        try await waitUntil("the drained batch was announced") {
            receiver.bodies(at: "/hook/outage").contains { $0["event"] == "batchFinished" }
        }
        _ = await batch.stopAll()
        await receiver.stop()
        let output = worker.stdout.soFar
        #expect(!output.contains("✗"), "the stopped item was reported failed:\n\(output)")
        #expect(!output.contains("another worker took this item over"), "\(output)")
        #expect(output.contains("stopped without contact with the database"), "\(output)")
        let bodies = receiver.bodies(at: "/hook/outage")
        #expect(bodies.allSatisfy { $0["event"] != "itemFailed" }, "\(bodies)")
        let finished = bodies.filter { $0["event"] == "batchFinished" }
        #expect(finished.count == 1 && finished.first?["workflow"] == "shared", "\(finished)")
        #expect(finished.first?["counts"]?["done"] == 1 && finished.first?["counts"]?["failed"] == nil, "\(finished)")
    }

    /// Two workflows queued in one database: the item of the one that fails is announced with that workflow's
    /// name, as `pipeline run` names it.
    @Test func itemFailedNamesItsWorkflow() async throws {
        let batch = try await SharedBatch(items: 1, stageSeconds: "0")
        defer { batch.killAll() }
        try batch.scratch.write(
            "broken.json",
            """
            {"version": 1, "name": "broken", "inputs": {"path": "in"}, "defaults": {"retry": {"attempts": 1}},
             "stages": [{"id": "fail", "uses": "exec", "with": {"command": ["sh", "-c", "echo cannot read >&2; exit 3"]}}]}
            """)
        let submitted = try await Binary.run(["submit", "broken.json", "--db", batch.url], in: batch.scratch.root)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        let receiver = try await WebhookReceiver.start()
        _ = try batch.startWorker(extra: ["--notify", receiver.url("/hook/failed") + "#itemFailed"])
        try await batch.waitUntilDone(1)
        try await waitUntil("the failed item was announced") {
            receiver.bodies(at: "/hook/failed").contains { $0["event"] == "itemFailed" }
        }
        _ = await batch.stopAll()
        await receiver.stop()
        let failures = receiver.bodies(at: "/hook/failed").filter { $0["event"] == "itemFailed" }
        #expect(failures.count == 1, "\(failures)")
        #expect(failures.first?["workflow"] == "broken", "\(failures)")
        #expect(failures.first?["path"] == "item-000.txt", "\(failures)")
    }
}
