import Foundation
import PipelineKit
import PostgresNIO
import StageKit
import TestSupport
import Testing

@testable import SharedBatch

/// Asking a worker to drain or stop through its `workers` row, against a real server: the request reaches the
/// worker with its lease renewal and its progress writes, a stop stands over a drain, and a worker that is not live
/// (or not listed) is refused.
@Suite struct WorkerRequestTests {
    @Test func aRequestReachesTheWorkerAndAStopStandsOverADrain() async throws {
        let server = try await PostgresServer.start()
        let database = try await BatchDatabase(url: try await server.createDatabase())
        let queue = BatchQueue(database: database)
        var worker = WorkerRecord(id: "w1", host: "h", pid: 1)
        worker.tookOver = 2
        let first = try await queue.heartbeat(worker, holding: [:], lease: .seconds(30), patience: .seconds(10))
        #expect(first.request == nil)

        #expect(try await queue.ask("nobody", to: .drain) == .unknown)
        #expect(try await queue.ask("w1", to: .drain) == nil)
        var beat = try await queue.heartbeat(worker, holding: [:], lease: .seconds(30), patience: .seconds(10))
        #expect(beat.request == .drain)
        #expect(try await queue.ask("w1", to: .stop) == nil)
        #expect(try await queue.ask("w1", to: .drain) == nil)
        beat = try await queue.heartbeat(worker, holding: [:], lease: .seconds(30), patience: .seconds(10))
        #expect(beat.request == .stop, "a drain asked after a stop leaves the stop")
        #expect(try await queue.request(of: "w1") == .stop)
        #expect(try await queue.publish(progress: nil, of: "w1") == .stop)

        var status = try await queue.status(listingFailed: false)
        let listed = try #require(status.workers.first)
        #expect(listed.state() == .stopping && listed.state().word == "stopping" && listed.tookOver == 2)
        #expect(listed.stoppedSince() == nil)

        try await queue.stopped(worker)
        #expect(try await queue.ask("w1", to: .stop) == .notLive)
        status = try await queue.status(listingFailed: false)
        #expect(status.workers.first?.state() == .stopped)
        await database.close()
        try await server.stop()
    }

    /// A worker of an older pipeline heartbeats without the mark that it takes requests: it would never act on one,
    /// so it is refused (and shown asked nothing), not left a drain it ignores.
    @Test func aWorkerWithoutTheMarkIsRefused() async throws {
        let server = try await PostgresServer.start()
        let database = try await BatchDatabase(url: try await server.createDatabase())
        let queue = BatchQueue(database: database)
        _ = try await database.rows(
            "write a row as an older pipeline does",
            "INSERT INTO workers(id, host, pid, lease, done, failed) VALUES ('old', 'h', 1, 30, 0, 0)")
        #expect(try await queue.ask("old", to: .drain) == .takesNoRequests)
        #expect(try await queue.ask("old", to: .stop) == .takesNoRequests)
        #expect(try await queue.request(of: "old") == nil)
        _ = try await queue.heartbeat(
            WorkerRecord(id: "old", host: "h", pid: 1), holding: [:], lease: .seconds(30), patience: .seconds(10))
        #expect(try await queue.ask("old", to: .drain) == nil, "once this pipeline heartbeats, the row is marked")
        await database.close()
        try await server.stop()
    }

    /// A worker silent for longer than its lease is `silent` by the rule, and people are told it stopped since its
    /// lease ran out: `status --db` and the dashboard say the same.
    @Test func aSilentWorkerReadsStoppedSinceItsLeaseRanOut() async throws {
        let server = try await PostgresServer.start()
        let database = try await BatchDatabase(url: try await server.createDatabase())
        let queue = BatchQueue(database: database)
        _ = try await queue.heartbeat(
            WorkerRecord(id: "w1", host: "h", pid: 1), holding: [:], lease: .seconds(1), patience: .seconds(10))
        let worker = try #require(try await queue.status(listingFailed: false).workers.first)
        let later = worker.heartbeatAt.addingTimeInterval(5)
        #expect(worker.state(at: later) == .silent && worker.state(at: later).word == "stopped")
        #expect(worker.stoppedSince(at: later) == worker.heartbeatAt.addingTimeInterval(1))
        #expect(worker.state(at: worker.heartbeatAt) == .live)
        await database.close()
        try await server.stop()
    }

    /// The stages a worker publishes come back, with their workflow, in the status; none once it writes none.
    @Test func publishedStagesComeBackInTheStatus() async throws {
        let server = try await PostgresServer.start()
        let database = try await BatchDatabase(url: try await server.createDatabase())
        let queue = BatchQueue(database: database)
        _ = try await queue.heartbeat(
            WorkerRecord(id: "w1", host: "h", pid: 1), holding: [:], lease: .seconds(30), patience: .seconds(10))
        let progress = WorkerProgress()
        #expect(progress.takeChange() == .none, "nothing changed: nothing to write")
        let stage = try #require(
            RunningStage(
                document: [
                    "item": "a.mp4", "stage": "export", "startedAt": "2026-01-01T00:00:00Z", "completed": 5,
                    "total": 10, "unit": "seconds",
                ]))
        progress.update(key: "k", name: "w", [stage])
        let change = try #require(progress.takeChange())
        #expect(progress.takeChange() == .none)
        _ = try await queue.publish(progress: change, of: "w1")
        var worker = try #require(try await queue.status(listingFailed: false).workers.first)
        #expect(worker.running == [WorkerStage(workflow: "w", stage: stage)])
        progress.update(key: "k", name: "w", [])
        let cleared = try #require(progress.takeChange())
        #expect(cleared == nil)
        _ = try await queue.publish(progress: cleared, of: "w1")
        worker = try #require(try await queue.status(listingFailed: false).workers.first)
        #expect(worker.running.isEmpty)
        await database.close()
        try await server.stop()
    }
}
