import Foundation
import SharedBatch
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Workers drained and stopped from the dashboard's API and from the command line, with real worker processes on a
/// real PostgreSQL: a drained worker finishes what it holds and exits 0; a stopped one hands its item back at once,
/// and another worker runs it well before the lease would have run out, with no takeover counted.
@Suite(.serialized) struct WorkerControlTests {
    static let token = "dashboard-token-1234"

    /// What a worker printed so far.
    static func said(_ worker: RunningBinary) -> String { worker.stderr.soFar + worker.stdout.soFar }

    @Test func aWorkerDrainedFromTheAPIFinishesItsItemAndExitsWhileTheOtherStaysQueued() async throws {
        let batch = try await SharedBatch(items: 2, stageSeconds: nil)
        defer { batch.killAll() }
        let worker = try batch.startWorker()
        let served = try await ServedDashboard.start(
            ["--db", batch.url], in: batch.scratch.root, environment: ["PIPELINE_SERVE_TOKEN": Self.token])
        defer { served.process.signal(SIGKILL) }
        try await waitUntil("the worker started its first item") {
            batch.effects().contains { $0.kind == "start" && $0.stage == "a" && $0.worker == worker.pid }
        }
        let id = try #require(try await batch.status().workers.first?.id)
        let path = "/api/workers/\(id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id)/drain"
        #expect(try await served.request(path, method: "POST").0 == 401, "an action needs the token")
        #expect(try await served.request("/api/workers/nobody/drain", method: "POST", bearer: Self.token).0 == 404)
        let (code, answer) = try await served.request(path, method: "POST", bearer: Self.token)
        #expect(code == 200 && answer["accepted"] == true, "\(answer)")
        try await waitUntil("the dashboard shows the worker draining") {
            let (_, status) = try await served.request("/api/status", bearer: Self.token)
            let listed = status["workers"]?.arrayValue?.first
            return listed?["state"] == "live" && listed?["live"] == true && listed?["request"] == "drain"
        }
        try await waitUntil("the worker saw the request", limit: .seconds(30)) {
            Self.said(worker).contains("asked to drain")
        }

        try batch.release()
        try await waitUntil("the drained worker exited") { !worker.isRunning }
        #expect(await worker.exit() == 0, "\(Self.said(worker))")
        let status = try await batch.status()
        #expect(status.workflows["shared"]?.byStatus["succeeded"] == 1, "\(status.workflows)")
        #expect(status.workflows["shared"]?.queued == 1, "the other item stays queued: \(status.workflows)")
        #expect(!batch.effects().contains { $0.item == "item-001.txt" }, "\(batch.effects())")
        #expect(status.workers.first?.state() == .stopped)
        let late = try await served.request(path, method: "POST", bearer: Self.token)
        #expect(late.0 == 409, "a stopped worker sees no request: \(late)")
        _ = await batch.stopAll()
    }

    @Test func aStoppedWorkersItemRunsAgainOnAnotherWorkerBeforeItsLeaseWithNoTakeover() async throws {
        let batch = try await SharedBatch(items: 1, stageSeconds: nil)
        defer { batch.killAll() }
        // A lease far longer than the wait below: the item can only move on because the stopped worker let it go.
        let lease = ["--lease", "90s"]
        let first = try batch.startWorker(extra: lease)
        try await waitUntil("the first worker started the item") {
            batch.effects().contains { $0.kind == "start" && $0.stage == "a" && $0.worker == first.pid }
        }
        let second = try batch.startWorker(extra: lease)
        try await waitUntil("both workers are listed") { (try? await batch.status().workers.count) == 2 }
        let id = try #require(try await batch.status().workers.first { $0.pid == Int(first.pid) }?.id)
        // When the first worker's lease would have run out: the second worker must run the item before it.
        let name = try #require(URL(string: batch.url)?.lastPathComponent)
        let expiry = try await batch.server.psql("SELECT lease_expires FROM items WHERE id = 1", database: name)
        #expect(!expiry.isEmpty, "the item is leased")

        let asked = try await Binary.run(["worker", "--db", batch.url, "--stop", id], in: batch.scratch.root)
        #expect(asked.status == 0, "\(asked.stdout)\(asked.stderr)")
        #expect(asked.stdout.contains("asked worker \(id) to stop"), "\(asked.stdout)")
        try await waitUntil("the stopped worker exited") { !first.isRunning }
        #expect(await first.exit() == 0, "\(Self.said(first))")
        try await waitUntil("the second worker runs the item") {
            batch.effects().contains { $0.kind == "start" && $0.stage == "a" && $0.worker == second.pid }
        }
        let beforeExpiry = try await batch.server.psql("SELECT now() < '\(expiry)'::timestamptz", database: name)
        #expect(beforeExpiry == "t", "the item moved on only when the first worker's lease (\(expiry)) ran out")
        #expect(try await BatchQueue(database: batch.database).takeovers(of: 1) == 0)
        #expect(!Self.said(second).contains("taking over"), "\(Self.said(second))")
        let status = try await batch.status()
        #expect(status.workers.first { $0.pid == Int(second.pid) }?.tookOver == 0)

        let again = try await Binary.run(["worker", "--db", batch.url, "--drain", id], in: batch.scratch.root)
        #expect(again.status == 1 && again.stderr.contains("is not live"), "\(again.stdout)\(again.stderr)")
        try batch.release()
        try await batch.waitUntilDone(1)
        _ = await batch.stopAll()
    }

    /// In Chromium: a read-only dashboard offers no buttons; signed in, a live worker's row offers Drain and Stop, a
    /// draining one Stop alone, and the row follows the worker from draining to stopping to stopped.
    @Test func theWorkerButtonsDrainThenStopAWorkerInTheBrowser() async throws {
        let batch = try await SharedBatch(items: 2, stageSeconds: nil)
        defer { batch.killAll() }
        let worker = try batch.startWorker()
        let readOnly = try await ServedDashboard.start(["--db", batch.url], in: batch.scratch.root)
        defer { readOnly.process.signal(SIGKILL) }
        let guarded = try await ServedDashboard.start(
            ["--db", batch.url], in: batch.scratch.root, environment: ["PIPELINE_SERVE_TOKEN": Self.token])
        defer { guarded.process.signal(SIGKILL) }
        try await waitUntil("the worker started its first item") {
            batch.effects().contains { $0.kind == "start" && $0.stage == "a" && $0.worker == worker.pid }
        }
        let browser = try BrowserSession()
        defer { browser.close() }
        let row = "document.querySelector('#workers tr.worker')"

        try await browser.navigate(readOnly.base + "/")
        try await browser.waitFor("\(row) !== null && document.body.dataset.listed === 'true'")
        #expect(try await browser.eval("document.querySelectorAll('button[data-worker]').length") == 0)

        try await browser.navigate(guarded.base + "/")
        try await browser.waitFor("!document.getElementById('login').hidden")
        try await browser.eval(
            "document.querySelector('#login input').value = '\(Self.token)'; document.getElementById('login').requestSubmit()"
        )
        try await browser.waitFor("document.getElementById('mode').textContent === 'signed in'")
        try await browser.waitFor("document.querySelector('button[data-request=\"drain\"]') !== null")
        #expect(try await browser.eval("document.querySelectorAll('button[data-worker]').length") == 2)
        try await browser.eval("document.querySelector('button[data-request=\"drain\"]').click()")
        try await browser.waitFor("\(row).classList.contains('draining') && \(row).textContent.includes('draining')")
        #expect(
            try await browser.eval(
                "[...document.querySelectorAll('button[data-worker]')].map((b) => b.dataset.request)")
                == ["stop"])
        try await browser.eval("document.querySelector('button[data-request=\"stop\"]').click()")
        try await waitUntil("the stopped worker exited", limit: .seconds(30)) { !worker.isRunning }
        #expect(await worker.exit() == 0, "\(Self.said(worker))")
        try await browser.waitFor("\(row).classList.contains('stopped') && \(row).textContent.includes('stopped')")
        #expect(try await browser.eval("document.querySelectorAll('button[data-worker]').length") == 0)
        let status = try await batch.status()
        #expect(status.workflows["shared"]?.queued == 2, "both items wait for a worker: \(status.workflows)")
        _ = await batch.stopAll()
    }

    /// A worker killed with SIGKILL says nothing: once its lease ran out, `status --db` calls it `stopped`, as the
    /// dashboard's page does (the JSON of both tells the case apart as `silent`).
    @Test func statusDBCallsAKilledWorkerStoppedAsTheDashboardDoes() async throws {
        let batch = try await SharedBatch(items: 1, stageSeconds: nil)
        defer { batch.killAll() }
        let killed = try batch.startWorker()
        try await waitUntil("the worker holds the item") {
            (try? await batch.status().workflows["shared"]?.running) == 1
        }
        killed.signal(SIGKILL)
        _ = await killed.exit()
        try await waitUntil("the killed worker's lease ran out", limit: .seconds(30)) {
            (try? await batch.status().workers.first?.state()) == .silent
        }
        let text = try await Binary.run(["status", "--db", batch.url], in: batch.scratch.root)
        let row = text.stdout.split(separator: "\n").first { $0.contains(":\(killed.pid):") } ?? ""
        #expect(row.contains(" stopped ") && !row.contains("silent"), "\(text.stdout)")
        let json = try await Binary.run(["status", "--db", batch.url, "--json"], in: batch.scratch.root)
        #expect(try JSONValue(parsing: json.stdout)["workers"]?.arrayValue?.first?["state"] == "silent")
        _ = await batch.stopAll()
    }
}
