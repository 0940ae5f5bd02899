import Foundation
import SharedBatch
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `pipeline cancel WORKFLOW ITEM --db URL` of an item a worker is running, from the cancel to a later `submit`.
@Suite(.serialized) struct SharedCancelTests {
    /// The worker stops the item in its slow stage (which never ends by itself), runs its onCancel stage and marks it
    /// cancelled; the command says so once the worker has. A later `submit` of the same files leaves it alone, and
    /// `submit --reprocess` queues it again, to run all its stages.
    @Test func aCancelledItemStopsOnItsWorkerAndStaysCancelledUntilReprocess() async throws {
        let batch = try await SharedBatch(items: 1, stageSeconds: nil, undoable: true)
        defer { batch.killAll() }
        let worker = try batch.startWorker()
        try await waitUntil("the worker started the slow stage") {
            batch.effects().contains { $0.kind == "start" && $0.stage == "a" && $0.worker == worker.pid }
        }

        let cancel = try await Binary.run(
            ["cancel", "wf.json", "item-000.txt", "--db", batch.url], in: batch.scratch.root)
        #expect(cancel.status == 0, "\(cancel.stdout)\(cancel.stderr)")
        #expect(cancel.stdout == "cancelled item-000.txt\n", "\(cancel.stdout)\(cancel.stderr)")
        let effects = batch.effects()
        #expect(
            effects.filter { $0.kind == "undo" }.map(\.worker) == [worker.pid], "the worker undid it once: \(effects)")
        #expect(!effects.contains { $0.kind == "end" || $0.stage == "b" }, "the item went on: \(effects)")
        var status = try await batch.status()
        #expect(status.workflows["shared"]?.byStatus["cancelled"] == 1)
        #expect(status.workflows["shared"]?.queued == 0 && status.workflows["shared"]?.running == 0)
        #expect(worker.isRunning, "the worker goes on after a cancel")

        let again = try await Binary.run(["submit", "wf.json", "--db", batch.url], in: batch.scratch.root)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("nothing new to queue"), "\(again.stdout)")
        status = try await batch.status()
        #expect(status.workflows["shared"]?.byStatus["cancelled"] == 1 && status.workflows["shared"]?.queued == 0)

        try batch.release()
        let reprocess = try await Binary.run(
            ["submit", "wf.json", "--db", batch.url, "--reprocess"], in: batch.scratch.root)
        #expect(reprocess.status == 0, "\(reprocess.stdout)\(reprocess.stderr)")
        #expect(reprocess.stdout.contains("queued 1 item"), "\(reprocess.stdout)")
        try await batch.waitUntilDone(1)
        let ran = batch.effects().filter { $0.kind == "end" }.map(\.stage)
        #expect(ran == ["a", "b"], "the reprocessed item ran all its stages: \(batch.effects())")
        #expect(await batch.stopAll() == [0])
    }
}
