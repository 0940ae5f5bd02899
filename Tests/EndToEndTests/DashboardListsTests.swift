import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The dashboard's lists as a person reads them in headless Chromium: more failures than a page holds, read page
/// by page with how many there are; a file name with a right-to-left override shown with the override escaped, not
/// as the name it pretends to be.
@Suite(.serialized) struct DashboardListsTests {
    /// Every item fails its only stage.
    static let workflow = """
        {"version": 1, "name": "lists", "inputs": {"path": "in"}, "defaults": {"retry": {"attempts": 1}},
         "stages": [{"id": "check", "uses": "exec", "with": {"command": ["sh", "-c", "echo bad file >&2; exit 3"]}}]}
        """

    /// Reads like `invoiceexe.pdf` where a browser applies the override.
    static let disguised = "invoice\u{202E}fdp.exe"

    @Test func failuresComeInPagesAndNamesShowTheirControls() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        for index in 0..<201 { try scratch.write("in/clip-\(index).txt", "content \(index)\n") }
        try scratch.write("in/\(Self.disguised)", "not a pdf\n")
        let run = try await Binary.run(["run", "wf.json", "--state", "state", "--jobs", "4"], in: scratch.root)
        #expect(run.status == 1, "\(run.stderr)")
        let served = try await ServedDashboard.start(["--state", "state"], in: scratch.root)
        defer { served.process.signal(SIGKILL) }
        let browser = try BrowserSession()
        defer { browser.close() }

        try await browser.navigate(served.base + "/")
        try await browser.waitFor("document.getElementById('failures-extent')?.textContent === '(1–200 of 202)'")
        let shownFirst = try await browser.eval("document.getElementById('failures').innerText")
        try await browser.eval("document.getElementById('older-failures').click()")
        try await browser.waitFor("document.getElementById('failures-extent')?.textContent === '(201–202 of 202)'")
        let shownSecond = try await browser.eval("document.getElementById('failures').innerText")
        let shown = (shownFirst.stringValue ?? "") + (shownSecond.stringValue ?? "")
        #expect(!shown.contains("\u{202E}"), "the override itself is on the page")
        #expect(shown.contains("invoice\\u202Efdp.exe"), "\(shown.suffix(400))")
        try await browser.eval("document.getElementById('newer-failures').click()")
        try await browser.waitFor("document.getElementById('failures-extent')?.textContent === '(1–200 of 202)'")
    }
}
