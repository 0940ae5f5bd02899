import Foundation
import PipelineKit
import SharedBatch
import StageKit
import TestSupport
import Testing

/// The run history and the retry of every failed item, in headless Chromium over `serve --db`: two submissions of a
/// shared batch listed with what each queued and found done, the throughput chart's labelled axes, and **Retry all
/// N failed** queueing the failed items again.
@Suite(.serialized) struct DashboardRunsTests {
    @Test func pastSubmissionsAndRetryAllFailed() async throws {
        let batch = try await SharedBatch(items: 3, stageSeconds: "0")
        defer { batch.killAll() }
        let worker = try batch.startWorker()
        try await batch.waitUntilDone(3)
        // A second submission finds the three done and queues the new file.
        try batch.scratch.write("in/item-new.txt", "a new file\n")
        let second = try await Binary.run(["submit", "wf.json", "--db", batch.url], in: batch.scratch.root)
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        try await batch.waitUntilDone(4)
        worker.signal(SIGTERM)
        _ = await worker.exit()
        // Two items end failed (as a worker records a failure): both can be queued again.
        let store = PostgresStore(database: batch.database)
        let done = try await store.items(matching: ItemQuery(status: .done, order: .name, limit: 2))
        let failed = done.items.map(\.item.id)
        try await store.setStatus(.failed, of: failed)

        let token = "dashboard-token-1234"
        let served = try await ServedDashboard.start(
            ["--db", batch.url], in: batch.scratch.root, environment: ["PIPELINE_SERVE_TOKEN": token])
        defer { served.process.signal(SIGKILL) }
        let (_, runs) = try await served.request("/api/runs", bearer: token)
        #expect(runs["runs"]?.arrayValue?.map { $0["bytes"] } == [11, 72], "\(runs)")
        let browser = try BrowserSession()
        defer { browser.close() }
        try await browser.navigate(served.base + "/")
        try await browser.waitFor("!document.getElementById('login').hidden")
        try await browser.eval(
            "document.querySelector('#login input').value = '\(token)'; document.getElementById('login').requestSubmit()"
        )
        try await browser.waitFor("document.querySelectorAll('#runs tr.run').length === 2")
        let rows = try await browser.eval(
            "[...document.querySelectorAll('#runs tr.run')].map((r) => r.dataset.outcome + ': ' + "
                + "r.querySelector('.counts').textContent)")
        #expect(
            rows == [
                "finished: 1 queued, 3 reused, 0 skipped, 0 failed",
                "finished: 3 queued, 0 reused, 0 skipped, 0 failed",
            ],
            "\(rows)")
        let titles = try await browser.eval(
            "[...document.querySelectorAll('#runs svg .axis-title')].map((t) => t.textContent)")
        #expect(titles == ["time", "items / min"], "\(titles)")
        let ticks = try await browser.eval(
            "['x', 'y'].map((a) => [...document.querySelectorAll('#runs svg text.tick.' + a)].filter((t) => t.textContent).length)"
        )
        #expect(ticks == [5, 3], "\(ticks)")

        try await browser.waitFor("document.getElementById('retry-all')?.textContent === 'Retry all 2 failed'")
        try await browser.eval("document.getElementById('retry-all').click()")
        try await browser.waitFor("document.getElementById('retry-all-result')?.textContent === 'queued 2 of 2'")
        let queued = try await BatchQueue(database: batch.database).queueState(of: failed).queued
        #expect(queued == Set(failed), "\(queued)")
        let (_, waiting) = try await served.request("/api/items?status=queued", bearer: token)
        #expect(waiting["total"] == 2, "\(waiting)")
        _ = await batch.stopAll()
    }

    /// A state folder's runs: one finished with a failed item, then one under way, running while it holds the folder
    /// and interrupted once `kill -9` ended it; the page lists both, and its **Retry all 1 failed** leaves the failed
    /// item for the next run (in a ledger an earlier pipeline made, without the table of requests), which answers it.
    @Test func aStateFoldersRunsAndAKilledOne() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", DashboardTests.workflow)
        for name in ["a.txt", "bad.txt"] {
            try scratch.write("in/\(name)", "content of \(name)\n")
            try scratch.write("gates/\(name)", "")
        }
        let environment = ["DASH_SECRET": DashboardTests.secret]
        let first = try await Binary.run(
            ["run", "wf.json", "--state", "state"], in: scratch.root, environment: environment)
        #expect(first.status == 1, "one item fails: \(first.stderr)")
        try scratch.write("in/c.txt", "content of c.txt\n")
        let second = try Binary.start(
            ["run", "wf.json", "--state", "state"], in: scratch.root, environment: environment)
        defer { if second.isRunning { second.signal(SIGKILL) } }
        let token = "dashboard-token-1234"
        let served = try await ServedDashboard.start(
            ["--state", "state"], in: scratch.root, environment: ["PIPELINE_SERVE_TOKEN": token])
        defer { served.process.signal(SIGKILL) }
        @Sendable func outcomes() async throws -> [String] {
            let (_, runs) = try await served.request("/api/runs", bearer: token)
            return (runs["runs"]?.arrayValue ?? []).compactMap { $0["outcome"]?.stringValue }
        }
        try await waitUntil("the second run is under way") { try await outcomes() == ["running", "failed items"] }
        // Only c.txt runs (waiting for its gate): bad.txt has failed again, or not started, so it stays failed.
        try await waitUntil("c.txt runs alone") {
            let (_, running) = try await served.request("/api/items?status=running", bearer: token)
            return running["items"]?.arrayValue?.map { $0["relativePath"] } == ["c.txt"]
        }
        second.signal(SIGKILL)
        _ = await second.exit()
        #expect(try await outcomes() == ["interrupted", "failed items"])
        let state = scratch.path("state")
        try downgradeLedger(under: state, "DROP TABLE retryRequests")
        let (status, queued) = try await served.request("/api/items/retry", method: "POST", bearer: token)
        #expect(status == 202 && queued["outcome"] == "queued for the next pipeline run", "\(queued)")
        #expect(queued["failed"] == 1 && queued["queued"] == 1, "\(queued)")

        let browser = try BrowserSession()
        defer { browser.close() }
        try await browser.navigate(served.base + "/")
        try await browser.waitFor("!document.getElementById('login').hidden")
        try await browser.eval(
            "document.querySelector('#login input').value = '\(token)'; document.getElementById('login').requestSubmit()"
        )
        try await browser.waitFor("document.querySelectorAll('#runs tr.run').length === 2")
        let rows = try await browser.eval(
            "[...document.querySelectorAll('#runs tr.run')].map((r) => r.dataset.outcome + ': ' + "
                + "r.querySelector('.counts').textContent)")
        #expect(rows == ["interrupted: ", "failed items: 1 done, 0 reused, 0 skipped, 1 failed"], "\(rows)")
        try await browser.waitFor("document.getElementById('retry-all')?.textContent === 'Retry all 1 failed'")
        #expect(try await browser.eval("document.getElementById('retry-note') === null") == true)
        try await browser.eval("document.getElementById('retry-all').click()")
        try await browser.waitFor(
            "document.getElementById('retry-all-result')?.textContent === '1 of 1: queued for the next pipeline run'")
        let reader = try SQLiteLedger(readingOnly: state)
        #expect(try await reader.retryRequests(workflow: "dash").count == 1)
        try reader.close()

        // The next run takes bad.txt up (it fails again) and answers its request.
        try scratch.write("gates/c.txt", "")
        let third = try await Binary.run(
            ["run", "wf.json", "--state", "state"], in: scratch.root, environment: environment)
        #expect(third.status == 1, "bad.txt fails again: \(third.stderr)")
        let after = try SQLiteLedger(readingOnly: state)
        #expect(try await after.retryRequests(workflow: "dash").isEmpty)
        try after.close()
    }
}
