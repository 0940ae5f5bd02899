import Foundation
import PipelineKit
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A dashboard's retry of a state folder's failed items under a real `pipeline watch`, through a real
/// `pipeline serve` with a token: the watch runs them again at once, from the stage that failed, though their files
/// did not change (it takes a failed file up again only once it changes otherwise).
@Suite(.serialized) struct StateFolderRetryTests {
    /// `prepare` and `check` log each file they run for; `check` fails until `flags/NAME` exists.
    static let workflow = """
        {"version": 1, "name": "retry", "inputs": {"path": "in"}, "defaults": {"retry": {"attempts": 1}},
         "stages": [
          {"id": "prepare", "uses": "exec", "with": {"command": ["sh", "-c", "echo \\"$0\\" >> prepared.log",
            "${input.name}"]}},
          {"id": "check", "uses": "exec", "with": {"command": ["sh", "-c",
            "echo \\"$0\\" >> checked.log; [ -e \\"flags/$0\\" ] || { echo \\"no flag for $0\\" >&2; exit 3; }",
            "${input.name}"]}}
         ]}
        """
    static let token = "dashboard-token-1234"

    /// A watch of `in/` over `names` (the files whose flag is in `flagged` pass), once its first pass has left
    /// `failed` items failed, and a dashboard with a token over its state folder.
    static func watching(_ names: [String], flagged: [String], failed: Int, in scratch: borrowing Scratch)
        async throws -> (RunningBinary, ServedDashboard)
    {
        try scratch.write("wf.json", workflow)
        for name in names { try scratch.write("in/\(name)", "content of \(name)\n") }
        for name in flagged { try scratch.write("flags/\(name)", "") }
        let watch = try Binary.start(["watch", "wf.json", "--state", "state", "--settle", "1s"], in: scratch.root)
        let state = scratch.path("state")
        let expected = ["succeeded": names.count - failed, "failed": failed].filter { $0.value > 0 }
        try await waitUntil("the watch's first pass", every: .milliseconds(50)) {
            await ledgerItemCounts(under: state, workflow: "retry") == expected
        }
        let served = try await ServedDashboard.start(
            ["--state", "state"], in: scratch.root, environment: ["PIPELINE_SERVE_TOKEN": token])
        return (watch, served)
    }

    static func ids(under state: URL) async -> [String: Int64] {
        Dictionary(
            await ledgerEntries(under: state, workflow: "retry").map { ($0.relativePath, $0.id) },
            uniquingKeysWith: { first, _ in first })
    }

    static func prepared(_ scratch: borrowing Scratch, log: String = "prepared.log") -> [String] {
        scratch.read(log).split(separator: "\n").map(String.init).sorted()
    }

    /// Whether `item` (late.txt) is failed after `checks` runs of its `check` stage.
    static func failed(_ item: Int64, checks: Int, under state: URL, log: URL) async -> Bool {
        let lines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n")
        guard lines.filter({ $0 == "late.txt" }).count == checks else { return false }
        return await ledgerEntries(under: state, workflow: "retry").first { $0.id == item }?.status == "failed"
    }

    /// A failed item whose file is gone is not asked for (its own retry is refused, a retry of all says so); a
    /// retried item that fails again is run once, not again at the watch's next wake.
    @Test func aGoneFileIsNotRetriedAndARetryRunsOnce() async throws {
        let scratch = try Scratch()
        let state = scratch.path("state")
        let (watch, served) = try await Self.watching(
            ["gone.txt", "late.txt", "other.txt"], flagged: [], failed: 3, in: scratch)
        defer { if watch.isRunning { watch.signal(SIGKILL) } }
        defer { served.process.signal(SIGKILL) }
        let ids = await Self.ids(under: state)
        let (gone, late, other) = (
            try #require(ids["gone.txt"]), try #require(ids["late.txt"]), try #require(ids["other.txt"])
        )
        let checked = scratch.path("checked.log")
        try FileManager.default.removeItem(at: scratch.path("in/gone.txt"))

        let (refusal, refused) = try await served.request(
            "/api/items/\(gone)/retry", method: "POST", bearer: Self.token)
        #expect(refusal == 409 && refused["error"]?.stringValue?.contains("file is gone") == true, "\(refused)")
        // late.txt runs again and fails again (no flag): once.
        let (status, answer) = try await served.request("/api/items/\(late)/retry", method: "POST", bearer: Self.token)
        #expect(status == 202 && answer["outcome"] == "running again now", "\(answer)")
        try await waitUntil("late.txt failed again", every: .milliseconds(50)) {
            await Self.failed(late, checks: 2, under: state, log: checked)
        }
        // other.txt's retry wakes the watch again: it runs other.txt, not late.txt once more.
        try scratch.write("flags/other.txt", "")
        let (_, both) = try await served.request("/api/items/\(other)/retry", method: "POST", bearer: Self.token)
        #expect(both["outcome"] == "running again now", "\(both)")
        try await waitUntil("the watch ran other.txt again", every: .milliseconds(50)) {
            await ledgerItemCounts(under: state, workflow: "retry") == ["succeeded": 1, "failed": 2]
        }
        #expect(
            Self.prepared(scratch, log: "checked.log") == [
                "gone.txt", "late.txt", "late.txt", "other.txt", "other.txt",
            ])

        // Retry all: late.txt asked for, gone.txt said to be gone; nothing is left for gone.txt.
        let (_, all) = try await served.request("/api/items/retry", method: "POST", bearer: Self.token)
        #expect(all["queued"] == 1 && all["failed"] == 2, "\(all)")
        #expect(all["outcome"] == "running again now; 1 not retried: its file is gone", "\(all)")
        try await waitUntil("late.txt failed a third time", every: .milliseconds(50)) {
            await Self.failed(late, checks: 3, under: state, log: checked)
        }
        let reader = try SQLiteLedger(readingOnly: state)
        #expect(try await reader.retryRequests(workflow: "retry").isEmpty, "no request left, gone.txt's neither")
        try reader.close()
        watch.signal(SIGINT)
        #expect(await watch.exit() == 0, "\(watch.stderr.soFar)")
    }

    @Test func aWatchRunsARetriedItemAgainFromTheStageThatFailed() async throws {
        let scratch = try Scratch()
        let state = scratch.path("state")
        let (watch, served) = try await Self.watching(
            ["good.txt", "late.txt"], flagged: ["good.txt"], failed: 1, in: scratch)
        defer { if watch.isRunning { watch.signal(SIGKILL) } }
        defer { served.process.signal(SIGKILL) }
        let ids = await Self.ids(under: state)
        let (good, late) = (try #require(ids["good.txt"]), try #require(ids["late.txt"]))

        let (refusal, refused) = try await served.request(
            "/api/items/\(good)/retry", method: "POST", bearer: Self.token)
        #expect(refusal == 409 && refused["error"]?.stringValue?.contains("has not failed") == true, "\(refused)")
        let file = scratch.path("in/late.txt").path
        let stamp = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date
        try scratch.write("flags/late.txt", "")
        let (status, answer) = try await served.request("/api/items/\(late)/retry", method: "POST", bearer: Self.token)
        #expect(status == 202 && answer["outcome"] == "running again now", "\(answer)")
        try await waitUntil("the watch ran late.txt again", every: .milliseconds(50)) {
            await ledgerItemCounts(under: state, workflow: "retry") == ["succeeded": 2]
        }
        // Taken up from the stage that failed, its file untouched; the request is answered.
        #expect(Self.prepared(scratch) == ["good.txt", "late.txt"])
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date == stamp)
        let reader = try SQLiteLedger(readingOnly: state)
        #expect(try await reader.retryRequests(workflow: "retry").isEmpty)
        try reader.close()
        watch.signal(SIGINT)
        #expect(await watch.exit() == 0, "\(watch.stderr.soFar)")
    }

    /// In headless Chromium: a failed item's **Retry** and **Retry all N failed** show for the token's holder and the
    /// watch runs what they ask for.
    @Test func thePagesRetriesRunUnderAWatch() async throws {
        let scratch = try Scratch()
        let state = scratch.path("state")
        let names = ["a.txt", "b.txt", "c.txt", "d.txt"]
        let (watch, served) = try await Self.watching(names, flagged: [], failed: 4, in: scratch)
        defer { if watch.isRunning { watch.signal(SIGKILL) } }
        defer { served.process.signal(SIGKILL) }
        let first = try #require(await Self.ids(under: state)["a.txt"])
        for name in names { try scratch.write("flags/\(name)", "") }

        let browser = try BrowserSession()
        defer { browser.close() }
        try await browser.navigate(served.base + "/")
        try await browser.waitFor("!document.getElementById('login').hidden")
        try await browser.eval(
            "document.querySelector('#login input').value = '\(Self.token)'; "
                + "document.getElementById('login').requestSubmit()")
        try await browser.waitFor("document.getElementById('retry-all')?.textContent === 'Retry all 4 failed'")
        try await browser.eval("location.hash = '#/item/\(first)'")
        try await browser.waitFor("document.getElementById('retry')")
        try await browser.eval("document.getElementById('retry').click()")
        try await browser.waitFor(
            "document.getElementById('action-result')?.textContent === 'retry requested: running again now'")
        try await waitUntil("the watch ran a.txt again", every: .milliseconds(50)) {
            await ledgerItemCounts(under: state, workflow: "retry") == ["succeeded": 1, "failed": 3]
        }

        try await browser.navigate(served.base + "/")
        try await browser.waitFor("document.getElementById('retry-all')?.textContent === 'Retry all 3 failed'")
        try await browser.eval("document.getElementById('retry-all').click()")
        try await browser.waitFor(
            "document.getElementById('retry-all-result')?.textContent === '3 of 3: running again now'")
        try await waitUntil("the watch ran the other three again", every: .milliseconds(50)) {
            await ledgerItemCounts(under: state, workflow: "retry") == ["succeeded": 4]
        }
        #expect(Self.prepared(scratch) == names, "each ran its first stage once")
        watch.signal(SIGINT)
        #expect(await watch.exit() == 0, "\(watch.stderr.soFar)")
    }
}
