import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `pipeline serve` over a running batch, read by headless Chromium as a person would: counts that change as
/// items finish, a failure's message, an action refused without the token and accepted with it, no secret
/// served. Screenshots of the overview and a failure's page go to `DASHBOARD_SCREENSHOTS` when it is set (the
/// README's, under docs/), else to the test's folder.
@Suite(.serialized) struct DashboardTests {
    static let secret = "s3cr3t-value-42"

    /// Four items whose first stage waits for a gate file the test creates; `bad.txt` then fails its check.
    static let workflow = """
        {"version": 1, "name": "dash", "inputs": {"path": "in"}, "vars": {"secret": "${env.DASH_SECRET}"},
         "defaults": {"retry": {"attempts": 1}},
         "stages": [
          {"id": "wait", "uses": "exec", "with": {"command": ["sh", "-c",
            "while [ ! -e \\"$0/$1\\" ]; do sleep 0.02; done; printf '{\\"page\\": \\"https://video.example/%s?signature=abc123\\", \\"auth\\": \\"%s\\"}' \\"$1\\" \\"$2\\"",
            "gates", "${input.name}", "${vars.secret}"]}},
          {"id": "check", "uses": "exec", "with": {"command": ["sh", "-c",
            "case \\"$0\\" in bad*) echo \\"checksum mismatch in $0\\" >&2; exit 3;; esac", "${input.name}"]}}
         ],
         "onCancel": [{"id": "undo", "uses": "exec", "with": {"command": ["true"]}}]}
        """

    static func count(_ status: String) -> String {
        "document.querySelector('[data-count=\"dash:\(status)\"]')?.textContent"
    }

    @Test func aBrowserFollowsARunningBatch() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        for name in ["a.txt", "b.txt", "c.txt", "bad.txt"] { try scratch.write("in/\(name)", "content of \(name)\n") }
        try FileManager.default.createDirectory(at: scratch.path("gates"), withIntermediateDirectories: true)
        let shots =
            ProcessInfo.processInfo.environment["DASHBOARD_SCREENSHOTS"].map { URL(fileURLWithPath: $0) }
            ?? scratch.root
        let environment = ["DASH_SECRET": Self.secret]
        let run = try Binary.start(
            ["run", "wf.json", "--state", "state", "--jobs", "4"], in: scratch.root, environment: environment)
        defer { if run.isRunning { run.signal(SIGKILL) } }
        let readOnly = try await ServedDashboard.start(["--state", "state"], in: scratch.root)
        defer { readOnly.process.signal(SIGKILL) }
        let token = "dashboard-token-1234"
        let guarded = try await ServedDashboard.start(
            ["--state", "state"], in: scratch.root, environment: ["PIPELINE_SERVE_TOKEN": token])
        defer { guarded.process.signal(SIGKILL) }
        let browser = try BrowserSession()
        defer { browser.close() }

        // All four running, then one done and one failed, without reloading the page.
        try await browser.navigate(readOnly.base + "/")
        try await browser.waitFor("\(Self.count("running")) === '4'")
        try scratch.write("gates/a.txt", "")
        try scratch.write("gates/bad.txt", "")
        try await browser.waitFor(
            "\(Self.count("done")) === '1' && \(Self.count("failed")) === '1' && \(Self.count("running")) === '2'")
        try await browser.waitFor(
            "[...document.querySelectorAll('#failures .failure .message')].some(e => e.textContent.includes('checksum mismatch in bad.txt'))"
        )
        #expect(try await browser.eval("document.getElementById('mode').textContent") == "read-only")
        try await browser.screenshot(shots.appendingPathComponent("dashboard-overview.png"))

        // The failure's page: its message; a server started without a token offers no action and refuses one.
        let failedID = try await browser.eval(
            "fetch('/api/items?status=failed').then(r => r.json()).then(j => j.items[0].id)")
        try await browser.eval("location.hash = '#/item/\(failedID.intValue ?? 0)'")
        try await browser.waitFor("document.getElementById('item-error')?.textContent.includes('checksum mismatch')")
        #expect(
            try await browser.eval(
                "document.getElementById('cancel') === null && document.getElementById('retry') === null") == true)
        let refusal = try await readOnly.request("/api/items/\(failedID.intValue ?? 0)/cancel", method: "POST")
        #expect(refusal.0 == 403 && refusal.1["error"]?.stringValue?.contains("read-only") == true, "\(refusal)")
        try await browser.screenshot(shots.appendingPathComponent("dashboard-failure.png"))

        // No secret: not the environment's value, not a URL's signature; the item's link is there without it.
        let done = try await readOnly.request("/api/items?status=done")
        let doneID = try #require(done.1["items"]?.arrayValue?.first?["id"]?.intValue)
        let (_, item) = try await readOnly.request("/api/items/\(doneID)")
        let served = item.serialized()
        #expect(!served.contains(Self.secret) && !served.contains("abc123"), "\(served)")
        #expect(item["links"] == ["https://video.example/a.txt?…"], "\(served)")

        // With a token: a wrong bearer is refused, the login form's cookie lets the page cancel a running item.
        let wrong = try await guarded.request("/api/items/\(doneID)/cancel", method: "POST", bearer: "not-the-token")
        #expect(wrong.0 == 401, "\(wrong)")
        let running = try await guarded.request("/api/items?status=running", bearer: token)
        let runningItem = try #require(
            running.1["items"]?.arrayValue?.first { $0["relativePath"] == "c.txt" }?["id"]?.intValue)
        try await browser.navigate(guarded.base + "/")
        try await browser.waitFor("!document.getElementById('login').hidden")
        try await browser.eval(
            "document.querySelector('#login input').value = 'not-the-token'; document.getElementById('login').requestSubmit()"
        )
        try await browser.waitFor("document.getElementById('login-result').textContent === 'wrong token'")
        try await browser.eval(
            "document.querySelector('#login input').value = '\(token)'; document.getElementById('login').requestSubmit()"
        )
        try await browser.waitFor("document.getElementById('mode').textContent === 'signed in'")
        try await browser.eval("location.hash = '#/item/\(runningItem)'")
        try await browser.waitFor("document.getElementById('cancel')")
        try await browser.eval("document.getElementById('cancel').click()")
        try await browser.waitFor("document.querySelector('#action-result.accepted')")
        try await browser.waitFor("document.getElementById('item-status')?.textContent === 'cancelled'")

        try scratch.write("gates/b.txt", "")
        try await browser.navigate(readOnly.base + "/")
        try await browser.waitFor(
            "\(Self.count("done")) === '2' && \(Self.count("failed")) === '1' && \(Self.count("cancelled")) === '1'")
        #expect(await run.exit() == 1, "one item failed")
        let (status, document) = try await readOnly.request("/api/status")
        #expect(status == 200)
        let counts = document["workflows"]?.arrayValue?.first?["counts"]
        #expect(counts?["done"] == 2 && counts?["failed"] == 1 && counts?["cancelled"] == 1 && counts?["running"] == 0)
    }
}
