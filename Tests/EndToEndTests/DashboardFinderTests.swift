import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Finding items on the dashboard as a person does in headless Chromium: a search typed into the box, an error
/// kind picked, a page turned, the page reloaded with the same list, the list sorted by a column's header.
@Suite(.serialized) struct DashboardFinderTests {
    /// Files whose name starts with `bad` fail their only stage; the others pass it.
    static let workflow = """
        {"version": 1, "name": "finder", "inputs": {"path": "in"}, "defaults": {"retry": {"attempts": 1}},
         "stages": [{"id": "check", "uses": "exec", "with": {"command": ["sh", "-c",
           "case \\"$0\\" in bad*) echo broken >&2; exit 3;; esac", "${input.name}"]}}]}
        """

    /// The extent the finder shows.
    static func extent(_ text: String) -> String {
        "document.getElementById('found-extent')?.textContent === '(\(text))'"
    }

    @Test func aSearchAndAFilterArePagedAndSurviveAReload() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        // Contents differ: a file with another's content would be left alone as its duplicate.
        for index in 0..<120 { try scratch.write("in/bad-\(index).txt", "bad \(index)\n") }
        for index in 0..<40 { try scratch.write("in/keep-\(index).txt", "kept \(index)\n") }
        let run = try await Binary.run(["run", "wf.json", "--state", "state", "--jobs", "4"], in: scratch.root)
        #expect(run.status == 1, "\(run.stderr)")
        let served = try await ServedDashboard.start(["--state", "state"], in: scratch.root)
        defer { served.process.signal(SIGKILL) }
        let browser = try BrowserSession()
        defer { browser.close() }

        try await browser.navigate(served.base + "/")
        try await browser.waitFor(Self.extent("1–100 of 160"))
        // Typed, as a person types: the box's value changes and it says so.
        try await browser.eval(
            """
            (() => { const box = document.getElementById('find-q'); box.focus(); box.value = 'bad';
              box.dispatchEvent(new Event('input', { bubbles: true })); })()
            """)
        try await browser.waitFor(Self.extent("1–100 of 120"))
        let names = try await browser.eval(
            "[...document.querySelectorAll('#found tr.found td.path')].map((c) => c.textContent).join(' ')")
        #expect(
            (names.stringValue ?? "").split(separator: " ").allSatisfy { $0.hasPrefix("bad-") },
            "\(names.stringValue ?? "")")
        // An error kind picked from the choices the ledger holds.
        let kind = try await browser.eval(
            """
            (() => { const select = document.getElementById('find-error');
              const choice = [...select.options].find((o) => o.value); select.value = choice.value;
              select.dispatchEvent(new Event('change', { bubbles: true })); return choice.value; })()
            """)
        let picked = try #require(kind.stringValue)
        try await browser.waitFor(
            "location.search.includes('error=\(picked)') && " + Self.extent("1–100 of 120"))
        try await browser.eval("document.getElementById('found-next').click()")
        try await browser.waitFor(Self.extent("101–120 of 120"))

        // Reloaded, the page shows the same list with the same controls.
        // The mark is gone only once the new page is there, so the wait below reads the reloaded page.
        try await browser.eval("window.beforeReload = true; location.reload()")
        try await browser.waitFor(
            "!window.beforeReload && " + Self.extent("101–120 of 120")
                + " && document.getElementById('find-q').value === 'bad'"
                + " && document.getElementById('find-error').value === '\(picked)'")

        // Sorted by name from the header: back to the first page, in the names' order.
        try await browser.eval("document.querySelector('#found th[data-sort=name]').click()")
        try await browser.waitFor(
            Self.extent("1–100 of 120") + " && location.search.includes('sort=name')"
                + " && document.querySelector('#found tr.found td.path')?.textContent === 'bad-0.txt'")
        let sorted = try await browser.eval(
            "[...document.querySelectorAll('#found tr.found td.path')].map((c) => c.textContent).join(' ')")
        let shown = (sorted.stringValue ?? "").split(separator: " ").map(String.init)
        #expect(shown == shown.sorted() && shown.count == 100, "\(shown.prefix(5))")

        // The stage they failed in, picked too, keeps the same items.
        try await browser.eval(
            """
            (() => { const select = document.getElementById('find-stage'); select.value = 'check';
              select.dispatchEvent(new Event('change', { bubbles: true })); })()
            """)
        try await browser.waitFor(Self.extent("1–100 of 120") + " && location.search.includes('stage=check')")
    }
}
