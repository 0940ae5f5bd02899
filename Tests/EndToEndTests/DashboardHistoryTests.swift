import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An item's history in headless Chromium: an `exec` stage that fails with lines on stderr and succeeds when tried
/// again shows both attempts on the item's timeline, the failed one with its whole error, its stderr lines escaped
/// (markup as text, a right-to-left override as its escape), and the successful one with what it said on stderr. Its screenshot goes to `DASHBOARD_SCREENSHOTS` when it
/// is set, else to the test's folder.
@Suite(.serialized) struct DashboardHistoryTests {
    /// The first attempt leaves a mark, complains on stderr and fails; the second finds the mark, says so on stderr
    /// and succeeds.
    static let workflow = """
        {"version": 1, "name": "history", "inputs": {"path": "in"},
         "stages": [{"id": "check", "uses": "exec", "retry": {"attempts": 2, "initialDelay": "10ms"},
          "with": {"command": ["sh", "-c",
            "[ -e \\"$0.tried\\" ] && { echo 'all clear' >&2; exit 0; }; touch \\"$0.tried\\"; echo 'disk on fire' >&2; echo '<b>not bold</b>' >&2; printf 'clip\\\\342\\\\200\\\\256gpj.exe\\\\n' >&2; exit 3",
            "marks/${input.name}"]}}]}
        """

    @Test func anItemsTimelineShowsEachAttemptWithItsErrorAndStderr() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        try scratch.write("in/clip.txt", "content\n")
        try FileManager.default.createDirectory(at: scratch.path("marks"), withIntermediateDirectories: true)
        let run = try await Binary.run(["run", "wf.json", "--state", "state"], in: scratch.root)
        #expect(run.status == 0, "\(run.stderr)")
        let served = try await ServedDashboard.start(["--state", "state"], in: scratch.root)
        defer { served.process.signal(SIGKILL) }
        let (_, items) = try await served.request("/api/items?status=done")
        let id = try #require(items["items"]?.arrayValue?.first?["id"]?.intValue)
        let browser = try BrowserSession()
        defer { browser.close() }

        try await browser.navigate(served.base + "/#/item/\(id)")
        let rows = "[...document.querySelectorAll('#history tr.attempt')]"
        try await browser.waitFor("\(rows).length === 2")
        let outcomes = try await browser.eval(
            "\(rows).map((row) => row.cells[1].textContent + ' ' + row.cells[2].textContent).join(', ')")
        #expect(outcomes == "1 failed, 2 succeeded")
        let bars = try await browser.eval("document.querySelectorAll('#history .lane .span').length")
        #expect(bars == 2, "each attempt has its bar on the timeline")
        let error = try await browser.eval("document.querySelector('#history tr.detail .message')?.innerText")
        let shown = error.stringValue ?? ""
        #expect(shown.contains("command-failed: sh exited with status 3"), "\(shown)")
        #expect(shown.contains("disk on fire\n<b>not bold</b>\nclip\\u202Egpj.exe"), "\(shown)")
        #expect(try await browser.eval("document.querySelector('#history b') === null") == true)
        let logs = try await browser.eval(
            "[...document.querySelectorAll('#history tr.detail pre.log')].map((pre) => pre.textContent).join(' | ')")
        #expect(logs.stringValue?.hasSuffix("| info: all clear") == true, "the success's stderr shows: \(logs)")
        let version = try await browser.eval("document.querySelector('#history .version h4')?.textContent")
        #expect(version.stringValue?.contains("Version 1 (current)") == true, "\(version)")
        let shots =
            ProcessInfo.processInfo.environment["DASHBOARD_SCREENSHOTS"].map { URL(fileURLWithPath: $0) }
            ?? scratch.root
        try await browser.screenshot(shots.appendingPathComponent("dashboard-history.png"))
    }
}
