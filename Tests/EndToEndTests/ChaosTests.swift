import Foundation
import SharedBatch
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The eight failure scenarios of the PostgreSQL job queues' chaos benchmarks, shortened, against a real PostgreSQL
/// and worker processes (`benchmarks/chaos.sh` runs them longer, with figures). Each ends with the same invariants
/// (``ChaosBatch/expectInvariants(repeatsAtMost:_:)``): no item lost, none failed, no side effect repeated beyond
/// the stage each disruption cut off, one remote video per item, and the workers recovered by themselves.
///
/// The workers run with the default takeover limit (`--abandon-after 3`): none of these disruptions may abandon an
/// item (the invariants fail on any failed item). An item that kills every worker that runs it (a poison item) is
/// AbandonedItemTests'.
@Suite(.serialized) struct ChaosTests {
    /// 1. A worker killed with -9 in the middle of a stage: the other one takes its item over once the lease
    /// expires; only that stage runs again.
    @Test func crashRecovery() async throws {
        let batch = try await ChaosBatch(items: 10, stageSeconds: "0.3")
        defer { batch.killAll() }
        let victim = try batch.startWorker()
        try batch.startWorker()
        try await waitUntil("3 items finished") { batch.finished() >= 3 }
        try await batch.waitUntilMidStage(victim)
        await batch.kill9(victim)
        try await batch.expectInvariants(repeatsAtMost: 1, "crash recovery")
        await batch.stopAll()
    }

    /// 2. Workers killed one after another at seeded moments, each started again as a supervisor would: at most
    /// one stage runs again per kill.
    @Test func repeatedKills() async throws {
        let random = SeededRandom("repeatedKills")
        let batch = try await ChaosBatch(items: 30, stageSeconds: "0.05")
        defer { batch.killAll() }
        var workers = try (0..<3).map { _ in try batch.startWorker() }
        let kills = 4
        for kill in 1...kills {
            let target = kill * 5 + random.int(in: 0...3)
            try await waitUntil("\(target) items finished") { batch.finished() >= target }
            let index = random.int(in: 0...(workers.count - 1))
            print("repeatedKills: kill \(kill) of worker \(index) after \(target) items")
            await batch.kill9(workers[index])
            workers[index] = try batch.startWorker()
        }
        try await batch.expectInvariants(repeatsAtMost: kills, "repeated kills")
        await batch.stopAll()
    }

    /// 3. PostgreSQL stopped abruptly in the middle of the batch (`pg_ctl stop -m immediate`), started again once
    /// the workers saw it gone: they reconnect by themselves. An item whose lease could not be renewed meanwhile
    /// stops and runs its stage again: at most one per job.
    @Test func databaseRestart() async throws {
        let batch = try await ChaosBatch(items: 16, stageSeconds: "0.1")
        defer { batch.killAll() }
        let workers = try (0..<2).map { _ in try batch.startWorker() }
        try await waitUntil("4 items finished") { batch.finished() >= 4 }
        try await batch.server.crash()
        try await waitUntil("a worker saw the database gone") {
            workers.contains { $0.stdout.soFar.contains("cannot") || $0.stderr.soFar.contains("cannot") }
        }
        try await batch.server.restart()
        try await batch.expectInvariants(repeatsAtMost: workers.count, "database restart")
        await batch.stopAll()
    }

    /// 4. Every session of the workers ended by the server (`pg_terminate_backend`) three times at seeded moments:
    /// statements in flight are sent again on new connections.
    @Test func backendKill() async throws {
        let random = SeededRandom("backendKill")
        let batch = try await ChaosBatch(items: 20, stageSeconds: "0.1")
        defer { batch.killAll() }
        let workers = try (0..<2).map { _ in try batch.startWorker(jobs: 2) }
        for round in 1...3 {
            let target = round * 4 + random.int(in: 0...2)
            try await waitUntil("\(target) items finished") { batch.finished() >= target }
            let ended = try await batch.server.terminateSessions(of: ChaosBatch.databaseName)
            print("backendKill: round \(round) after \(target) items ended \(ended) sessions")
        }
        try await batch.expectInvariants(repeatsAtMost: 3 * workers.count * 2, "backend kill")
        await batch.stopAll()
    }

    /// 5. A server whose `max_connections` is lower than the workers' connections want (three workers of two jobs,
    /// each opening up to eight, against five, one of them the test's own): a connection the server refuses makes a
    /// worker wait for one it holds, or for a free slot, and go on; no worker stops.
    @Test func poolExhaustion() async throws {
        let batch = try await ChaosBatch(items: 16, stageSeconds: "0.05")
        defer { batch.killAll() }
        try await batch.server.restart(settings: ["max_connections=5"])
        let workers = try (0..<3).map { _ in try batch.startWorker(jobs: 2) }
        try await waitUntil("16 items finished") { batch.finished() == batch.items.count }
        let ended = workers.filter { !$0.isRunning }.map { $0.stdout.soFar + $0.stderr.soFar }
        #expect(ended.isEmpty, "a worker gave up: \(ended)")
        try await batch.expectInvariants(repeatsAtMost: workers.count * 2, "pool exhaustion")
        #expect(workers.allSatisfy { $0.isRunning }, "a worker stopped by itself")
        print("poolExhaustion: \(batch.refusedConnections()) connections refused by the full server")
        await batch.stopAll()
    }

    /// 5b. A worker started while the server has no free connection at all waits for one, as for a server that does
    /// not answer yet (it does not stop), and works once a slot frees.
    @Test func workerStartedOnAFullServer() async throws {
        let batch = try await ChaosBatch(items: 4, stageSeconds: "0.02")
        defer { batch.killAll() }
        try await batch.server.restart(settings: ["max_connections=4"])
        var sessions: [HeldSession] = []
        for _ in 0..<4 { sessions.append(try await batch.server.openSession(database: ChaosBatch.databaseName)) }
        let refused = batch.refusedConnections()
        let worker = try batch.startWorker()
        try await waitUntil("the worker was refused three times, or stopped") {
            batch.refusedConnections() >= refused + 3 || !worker.isRunning
        }
        #expect(worker.isRunning, "the worker stopped: \(worker.stdout.soFar)\(worker.stderr.soFar)")
        #expect(batch.finished() == 0)
        await sessions.removeLast().end()
        try await waitUntil("4 items finished on the one free connection, or the worker stopped") {
            batch.finished() == batch.items.count || !worker.isRunning
        }
        for session in sessions { await session.end() }
        try await batch.expectInvariants(repeatsAtMost: 0, "a worker started on a full server")
        #expect(worker.isRunning, "the worker stopped: \(worker.stdout.soFar)\(worker.stderr.soFar)")
        await batch.stopAll()
    }

    /// 6. A retry storm: every item's first stage fails its first attempt at once, and succeeds on its retry.
    @Test func retryStorm() async throws {
        let batch = try await ChaosBatch(items: 20, stageSeconds: "0.02", failingFirst: true)
        defer { batch.killAll() }
        for _ in 0..<2 { try batch.startWorker(jobs: 2) }
        try await batch.expectInvariants(repeatsAtMost: 0, "retry storm")
        let failures = batch.effects().filter { $0.kind == "fail" }
        #expect(Set(failures.map(\.item)) == Set(batch.items) && failures.count == batch.items.count)
        await batch.stopAll()
    }

    /// 7. Priority and starvation: a long source split into segment units that workers claim before items, beside
    /// many short items; neither starves, and the long source's export is joined whole.
    @Test func priorityAndStarvation() async throws {
        let batch = try await ChaosBatch(items: 16, stageSeconds: "0.05")
        defer { batch.killAll() }
        try FileManager.default.createDirectory(at: batch.scratch.path("long"), withIntermediateDirectories: true)
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=8", "-f", "lavfi", "-i",
                "sine=frequency=440:duration=8", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-c:a", "aac",
                batch.scratch.path("long/master.mp4").path,
            ])
        #expect(made.status == 0, "\(made.stderr)")
        try batch.scratch.write(
            "long.json",
            """
            {"version": 1, "name": "long", "inputs": {"path": "long"}, "stages": [
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"output": "\(batch.scratch.path("out").path)/${input.stem}.mp4", "video": {"preset": "ultrafast", "crf": 35}, "threads": 1, "segmentSeconds": 2}}
            ]}
            """)
        let submitted = try await Binary.run(["submit", "long.json", "--db", batch.url], in: batch.scratch.root)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        let segments = batch.scratch.path("segments")
        try FileManager.default.createDirectory(at: segments, withIntermediateDirectories: true)
        for _ in 0..<2 { try batch.startWorker(extra: ["--segments", segments.path]) }
        try await batch.waitUntilDone(workflow: "long", count: 1)
        try await batch.expectInvariants(repeatsAtMost: 0, "priority and starvation")
        let units = try await SegmentQueue(database: batch.database).splits()
        #expect(units.allSatisfy { $0.done == $0.units }, "\(units)")
        #expect(FileManager.default.fileExists(atPath: batch.scratch.path("out/master.mp4").path))
        await batch.stopAll()
    }

    /// 8. A session idle in a transaction for the whole batch, holding the xmin horizon (no dead row can be
    /// vacuumed): claims skip the dead rows they cannot remove, and the batch finishes.
    @Test func longHeldTransaction() async throws {
        let batch = try await ChaosBatch(items: 20, stageSeconds: "0.02")
        defer { batch.killAll() }
        let held = try await batch.server.holdTransaction(database: ChaosBatch.databaseName)
        for _ in 0..<2 { try batch.startWorker(jobs: 2) }
        try await batch.expectInvariants(repeatsAtMost: 0, "long-held transaction")
        let dead = try await batch.server.psql(
            "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'items'", database: ChaosBatch.databaseName)
        print("longHeldTransaction: \(dead) dead rows in items while the transaction was held")
        await held.end()
        await batch.stopAll()
    }
}
