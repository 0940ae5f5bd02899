import Foundation
import PipelineKit
import SharedBatch
import StageKit
import TestSupport
import Testing

/// A shared batch on PostgreSQL with two workers: `serve --db`'s status API counts what `status --db --json`
/// counts while the workers hold items and once the queue drained, and the workers announce the drained batch
/// once between them.
@Suite(.serialized) struct SharedDashboardTests {
    @Test func statusAPIMatchesStatusDBWhileWorkersRun() async throws {
        let batch = try await SharedBatch(items: 6, stageSeconds: nil)
        defer { batch.killAll() }
        let receiver = try await WebhookReceiver.start()
        let notify = ["--notify", receiver.url("/hook/workers")]
        var workers: [RunningBinary] = []
        for _ in 0..<2 {
            let worker = try Binary.start(
                ["worker", "--db", batch.url] + WorkerTests.workerArguments + notify, in: batch.scratch.root)
            workers.append(worker)
        }
        defer { for worker in workers where worker.isRunning { worker.signal(SIGKILL) } }
        let served = try await ServedDashboard.start(["--db", batch.url], in: batch.scratch.root)
        defer { served.process.signal(SIGKILL) }

        // Both workers hold an item, which waits for the gate: nothing changes while the two are read.
        try await waitUntil("both workers hold an item") {
            (try? await batch.status().workflows["shared"]?.running) == 2
        }
        try await expectSameCounts(served, batch)

        try batch.release()
        try await batch.waitUntilDone(6)
        try await expectSameCounts(served, batch)
        try await waitUntil("the drained batch was announced") {
            !receiver.bodies(at: "/hook/workers").isEmpty
        }
        for worker in workers {
            worker.signal(SIGTERM)
            _ = await worker.exit()
        }
        await receiver.stop()
        let finished = receiver.bodies(at: "/hook/workers").filter { $0["event"] == "batchFinished" }
        #expect(finished.count == 1, "\(finished)")
        #expect(finished.first?["counts"]?["done"] == 6)
        _ = await batch.stopAll()
    }

    /// The ledger holds a shared batch's queued items as pending: the lists tell the running ones (a live lease
    /// holds them) from those that wait, as the counts do; a retried item shows as queued, and retrying it again asks
    /// for what is under way instead of failing.
    @Test func runningItemsAreTheOnesWorkersHold() async throws {
        let batch = try await SharedBatch(items: 4, stageSeconds: nil)
        defer { batch.killAll() }
        let worker = try batch.startWorker()
        let token = "dashboard-token-1234"
        let served = try await ServedDashboard.start(
            ["--db", batch.url, "--public-reads"], in: batch.scratch.root,
            environment: ["PIPELINE_SERVE_TOKEN": token])
        defer { served.process.signal(SIGKILL) }
        try await waitUntil("the worker holds an item") {
            (try? await batch.status().workflows["shared"]?.running) == 1
        }
        let (_, running) = try await served.request("/api/items?status=running")
        #expect(running["items"]?.arrayValue?.map { $0["status"] } == ["running"], "\(running)")
        #expect(running["total"] == 1)
        let (_, queued) = try await served.request("/api/items?status=queued")
        #expect(queued["items"]?.arrayValue?.count == 3 && queued["total"] == 3, "\(queued)")
        #expect(queued["items"]?.arrayValue?.allSatisfy { $0["status"] == "queued" } == true, "\(queued)")
        let (_, status) = try await served.request("/api/status")
        let counts = status["workflows"]?.arrayValue?.first?["counts"]
        #expect(counts?["running"] == 1 && counts?["queued"] == 3, "\(String(describing: counts))")

        try batch.release()
        try await batch.waitUntilDone(4)
        worker.signal(SIGTERM)
        _ = await worker.exit()
        let (_, done) = try await served.request("/api/items?status=done")
        let id = try #require(done["items"]?.arrayValue?.first?["id"]?.intValue)
        try await PostgresStore(database: batch.database).setStatus(.failed, of: [Int64(id)])
        let (_, failed) = try await served.request("/api/items/\(id)", bearer: token)
        #expect(failed["status"] == "failed" && failed["actions"] == ["retry"], "\(failed)")
        for _ in 0..<2 {
            let (code, answer) = try await served.request("/api/items/\(id)/retry", method: "POST", bearer: token)
            #expect(code == 200, "\(answer)")
        }
        let (_, retried) = try await served.request("/api/items/\(id)", bearer: token)
        #expect(retried["status"] == "queued" && retried["actions"] == [], "\(retried)")
        _ = await batch.stopAll()
    }

    /// A worker killed with SIGKILL says nothing: once its lease has run out the dashboard shows it stopped since
    /// then (not `silent` for ever), and the token's holder removes the stopped workers from the list.
    @Test func aKilledWorkerIsStoppedAfterItsLeaseAndCanBeRemoved() async throws {
        let batch = try await SharedBatch(items: 2, stageSeconds: nil)
        defer { batch.killAll() }
        let killed = try batch.startWorker()
        let token = "dashboard-token-1234"
        let served = try await ServedDashboard.start(
            ["--db", batch.url], in: batch.scratch.root, environment: ["PIPELINE_SERVE_TOKEN": token])
        defer { served.process.signal(SIGKILL) }
        try await waitUntil("the worker holds an item") {
            (try? await batch.status().workflows["shared"]?.running) == 1
        }
        killed.signal(SIGKILL)
        _ = await killed.exit()
        // `status --db`'s word for a worker whose lease ran out without it saying it stopped; the page says stopped.
        try await waitUntil("the killed worker is silent", limit: .seconds(30)) {
            let (_, status) = try await served.request("/api/status", bearer: token)
            return status["workers"]?.arrayValue?.first?["state"] == "silent"
        }
        let (_, status) = try await served.request("/api/status", bearer: token)
        #expect(status["workers"]?.arrayValue?.first?["stoppedAt"]?.stringValue != nil, "\(status)")
        let refused = try await served.request("/api/workers/prune", method: "POST")
        #expect(refused.0 == 401, "\(refused)")
        let (code, pruned) = try await served.request("/api/workers/prune", method: "POST", bearer: token)
        #expect(code == 200 && pruned["pruned"] == 1, "\(pruned)")
        let (_, after) = try await served.request("/api/status", bearer: token)
        #expect(after["workers"]?.arrayValue?.isEmpty == true, "\(after)")
        _ = await batch.stopAll()
    }

    /// The database stopped under `serve --db`: each read answers 503 with the reason within a few seconds (not
    /// after the operations' two minutes, with requests piling up behind the page's refreshes), and once the
    /// database is back the status reads again.
    @Test func aStoppedDatabaseAnswers503AndTheStatusComesBack() async throws {
        let batch = try await SharedBatch(items: 1, stageSeconds: "0")
        defer { batch.killAll() }
        let served = try await ServedDashboard.start(["--db", batch.url], in: batch.scratch.root)
        defer { served.process.signal(SIGKILL) }
        #expect(try await served.request("/api/status").0 == 200)
        let browser = try BrowserSession()
        defer { browser.close() }
        try await browser.navigate(served.base + "/")
        try await browser.waitFor("document.body.dataset.listed === 'true'")
        try await batch.server.stop()
        for path in ["/api/status", "/api/items?status=failed", "/api/items/1"] {
            let clock = ContinuousClock()
            let started = clock.now
            let (code, body) = try await served.request(path)
            // The serve's patience is 3 s (a stopped server on this machine refuses connections at once); the
            // rest is a margin for a loaded machine.
            #expect(clock.now - started < .seconds(6), "\(path) took \(clock.now - started)")
            #expect(code == 503, "\(path): \(code) \(body)")
            #expect(body["error"]?.stringValue?.contains("database") == true, "\(path): \(body)")
        }
        // The page keeps what it last read, marked stale since then, and says why in words.
        try await browser.waitFor("document.body.dataset.stale !== undefined")
        let live = try await browser.eval("document.getElementById('live').textContent").stringValue ?? ""
        #expect(live.contains("cannot read: ") && live.contains("counts stale since"), "\(live)")
        #expect(!live.contains("Error("), "\(live)")
        try await batch.server.restart()
        try await waitUntil("the status reads again") { (try? await served.request("/api/status").0) == 200 }
        try await browser.waitFor("document.body.dataset.stale === undefined")
        _ = await batch.stopAll()
    }

    /// `/api/status` and `status --db --json` give the same counts: queued and running from the queue, the other
    /// items by status under the API's names.
    private func expectSameCounts(_ served: ServedDashboard, _ batch: SharedBatch) async throws {
        let (code, api) = try await served.request("/api/status")
        #expect(code == 200)
        let status = try await Binary.run(["status", "--db", batch.url, "--json"], in: batch.scratch.root)
        #expect(status.status == 0, "\(status.stderr)")
        let queues = try JSONValue(parsing: status.stdout)["queues"]
        let counts = api["workflows"]?.arrayValue?.first { $0["name"] == "shared" }?["counts"]
        let queue = try #require(queues?["shared"])
        let byStatus = queue["items"]
        #expect(counts?["queued"] == queue["queued"], "api \(String(describing: counts)), status \(queue)")
        #expect(
            counts?["running"]?.intValue == (queue["running"]?.intValue ?? 0) + (byStatus?["pending"]?.intValue ?? 0))
        #expect(counts?["done"]?.intValue == byStatus?["succeeded"]?.intValue ?? 0)
        #expect(counts?["failed"]?.intValue == byStatus?["failed"]?.intValue ?? 0)
        let workers = api["workers"]?.arrayValue ?? []
        #expect(workers.count == 2 && workers.allSatisfy { $0["state"] == "live" }, "\(workers)")
    }
}
