import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An open item page's history is pushed, in headless Chromium: while a `pipeline run` retries an `exec` stage, the
/// new failed attempt shows without a reload, though neither the counts nor the running stage changed, and with the
/// page's clock held (so no timer can bring it: only the stream's `item` event). A text selected in the history
/// stays selected, its node kept.
@Suite(.serialized) struct DashboardHistoryPushTests {
    /// Attempt 1 fails at once; attempt 2 waits for `go1`, then fails; attempt 3 waits for `go2`, then succeeds.
    static let workflow = """
        {"version": 1, "name": "pushed", "inputs": {"path": "in"},
         "stages": [{"id": "check", "uses": "exec", "retry": {"attempts": 3, "initialDelay": "10ms"},
          "with": {"command": ["sh", "-c",
            "if [ ! -e tried1 ]; then touch tried1; echo 'first try failed' >&2; exit 3; fi; if [ ! -e tried2 ]; then touch tried2; while [ ! -e go1 ]; do sleep 0.05; done; echo 'second try failed' >&2; exit 4; fi; while [ ! -e go2 ]; do sleep 0.05; done"]}}]}
        """

    @Test func aNewAttemptIsPushedToTheOpenItemPageKeepingTheSelection() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        try scratch.write("in/clip.txt", "content\n")
        let run = try Binary.start(["run", "wf.json", "--state", "state"], in: scratch.root)
        defer { if run.isRunning { run.signal(SIGKILL) } }
        let tried2 = scratch.path("tried2").path
        try await waitUntil("attempt 2 started") { FileManager.default.fileExists(atPath: tried2) }
        let served = try await ServedDashboard.start(["--state", "state"], in: scratch.root)
        defer { served.process.signal(SIGKILL) }
        let (_, items) = try await served.request("/api/items")
        let id = try #require(items["items"]?.arrayValue?.first?["id"]?.intValue)
        let browser = try BrowserSession()
        defer { browser.close() }
        // The page's clock stands still from its first script on: a re-read on a timer would never come.
        try await browser.beforeEachPage("{ const now = Date.now(); Date.now = () => now; }")

        try await browser.navigate(served.base + "/#/item/\(id)")
        let rows = "[...document.querySelectorAll('#history tr.attempt')]"
        let outcomes = "\(rows).map((row) => row.cells[1].textContent + ' ' + row.cells[2].textContent).join(', ')"
        try await browser.waitFor("\(outcomes) === '1 failed, 2 running'")
        try await browser.waitFor("document.body.dataset.transport === 'stream'")
        let selected = try await browser.eval(
            """
            (() => {
              const message = document.querySelector('#history tr.detail .message');
              message.kept = true;
              const range = document.createRange();
              range.selectNodeContents(message);
              getSelection().removeAllRanges();
              getSelection().addRange(range);
              return getSelection().toString();
            })()
            """)
        #expect(selected.stringValue?.contains("first try failed") == true, "\(selected)")

        try scratch.write("go1", "")
        try await browser.waitFor("\(outcomes) === '1 failed, 2 failed, 3 running'", limit: 60)
        #expect(try await browser.eval("getSelection().toString()") == selected, "the selection stays")
        #expect(try await browser.eval("document.querySelector('#history tr.detail .message').kept === true") == true)
        let logs = try await browser.eval(
            "[...document.querySelectorAll('#history tr.detail pre.log')].map((pre) => pre.textContent).join(' | ')")
        #expect(logs.stringValue?.contains("info: second try failed") == true, "\(logs)")

        try scratch.write("go2", "")
        #expect(await run.exit() == 0, "\(run.stderr.soFar)")
    }
}
