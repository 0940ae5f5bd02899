import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `pipeline serve` with a token, attacked as a page of another origin would: a signed-in browser visits a page on
/// another port of 127.0.0.1 that posts a cancel with a form and with a no-cors `fetch`, and neither cancels; a
/// request naming another host (DNS rebinding) reads nothing; reads need the token; guessing it is slowed down.
@Suite(.serialized) struct DashboardAccessTests {
    static let token = "dashboard-token-1234"

    /// One item whose stage waits for the test's gate file.
    static let workflow = """
        {"version": 1, "name": "guarded", "inputs": {"path": "in"},
         "stages": [{"id": "wait", "uses": "exec", "with": {"command": ["sh", "-c",
            "while [ ! -e gate ]; do sleep 0.02; done"]}}],
         "onCancel": [{"id": "undo", "uses": "exec", "with": {"command": ["touch", "undone"]}}]}
        """

    @Test func anotherPageCannotMakeASignedInBrowserCancel() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", Self.workflow)
        try scratch.write("in/clip.txt", "content\n")
        let run = try Binary.start(["run", "wf.json", "--state", "state"], in: scratch.root)
        defer { if run.isRunning { run.signal(SIGKILL) } }
        let dashboard = try await ServedDashboard.start(
            ["--state", "state"], in: scratch.root, environment: ["PIPELINE_SERVE_TOKEN": Self.token])
        defer { dashboard.process.signal(SIGKILL) }
        let running = NIOLockedValueBox(0)
        try await waitUntil("the item is running") {
            let (_, listed) = try await dashboard.request("/api/items?status=running", bearer: Self.token)
            running.withLockedValue { $0 = listed["items"]?.arrayValue?.first?["id"]?.intValue ?? 0 }
            return running.withLockedValue { $0 } > 0
        }
        let itemID = running.withLockedValue { $0 }
        let target = "\(dashboard.base)/api/items/\(itemID)/cancel"
        let attacker = try await StaticPage.start(
            html: """
                <!doctype html><html><body>
                <form id="f" method="post" action="\(target)"><input name="x" value="1"></form>
                <script>
                fetch("\(target)", { method: "POST", mode: "no-cors", credentials: "include" })
                  .finally(() => { document.title = "fetched"; document.getElementById("f").submit(); });
                </script></body></html>
                """)
        let browser = try BrowserSession()
        defer { browser.close() }

        try await browser.navigate(dashboard.base + "/")
        try await browser.eval(
            "document.querySelector('#login input').value = '\(Self.token)'; document.getElementById('login').requestSubmit()"
        )
        try await browser.waitFor("document.getElementById('mode').textContent === 'signed in'")
        try await browser.navigate(attacker.url)
        try await browser.waitFor("location.href === '\(target)' && document.body.innerText.includes('another site')")

        // A script's request that says it comes from another site's page is refused, even with the token.
        let forged = try await dashboard.request(
            "/api/items/\(itemID)/cancel", method: "POST", bearer: Self.token,
            headers: ["Origin: http://evil.example"])
        #expect(forged.0 == 403, "\(forged)")

        try scratch.write("gate", "")
        #expect(await run.exit() == 0, "the item was cancelled: \(run.stdout.soFar)")
        let (_, item) = try await dashboard.request("/api/items/\(itemID)", bearer: Self.token)
        #expect(item["status"] == "done", "\(item)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("undone").path), "onCancel ran")
        await attacker.stop()

        // Signing out closes the session: the page asks to sign in again and its reads are refused.
        try await browser.navigate(dashboard.base + "/")
        try await browser.waitFor("document.getElementById('mode').textContent === 'signed in'")
        try await browser.eval("document.getElementById('logout').click()")
        try await browser.waitFor("!document.getElementById('login').hidden")
        #expect(try await browser.eval("fetch('/api/status').then(r => r.status)") == 401)
    }

    @Test func readsNeedTheTokenAndOnlyItsOwnHostNamesAreServed() async throws {
        let scratch = try Scratch()
        let dashboard = try await ServedDashboard.start(
            ["--state", "state"], in: scratch.root, environment: ["PIPELINE_SERVE_TOKEN": Self.token])
        defer { dashboard.process.signal(SIGKILL) }
        #expect(try await dashboard.request("/api/status").0 == 401)
        #expect(try await dashboard.request("/api/status", bearer: Self.token).0 == 200)
        // A page whose name was made to resolve to 127.0.0.1 sends its own name as Host.
        let rebound = try await dashboard.request(
            "/api/status", bearer: Self.token, headers: ["Host: evil.example:\(dashboard.port)"])
        #expect(rebound.0 == 421, "\(rebound)")
        #expect(try await dashboard.request("/", headers: ["Host: evil.example"]).0 == 421)
        #expect(try await dashboard.request("/api/status", bearer: Self.token, headers: ["Host: localhost"]).0 == 200)

        let open = try await ServedDashboard.start(
            ["--state", "state", "--public-reads", "--allow-host", "media.example"], in: scratch.root,
            environment: ["PIPELINE_SERVE_TOKEN": Self.token])
        defer { open.process.signal(SIGKILL) }
        #expect(try await open.request("/api/status").0 == 200)
        #expect(try await open.request("/api/status", headers: ["Host: media.example:\(open.port)"]).0 == 200)
        #expect(try await open.request("/api/status", headers: ["Host: other.example"]).0 == 421)
    }

    /// 300 wrong tokens as fast as curl sends them: a few are looked at, the rest wait.
    @Test func guessingTheTokenIsSlowedDown() async throws {
        let scratch = try Scratch()
        let dashboard = try await ServedDashboard.start(
            ["--state", "state"], in: scratch.root, environment: ["PIPELINE_SERVE_TOKEN": Self.token])
        defer { dashboard.process.signal(SIGKILL) }
        var statuses: [Int: Int] = [:]
        for guess in 0..<300 {
            let (status, _) = try await dashboard.request("/api/status", bearer: "guess-\(guess)")
            statuses[status, default: 0] += 1
        }
        #expect((statuses[401] ?? 0) <= 10 && (statuses[429] ?? 0) >= 290, "\(statuses)")
        // The right token, given just after a wrong one was looked at (which starts a wait of seconds), is refused
        // unread too. Asked right after the guesses instead, it could land just as a wait ended.
        var (looked, tries) = (false, 0)
        while !looked && tries < 100_000 {
            looked = try await dashboard.request("/api/status", bearer: "guess-again").0 == 401
            tries += 1
        }
        #expect(looked, "no wrong token was looked at again")
        let waiting = try await dashboard.request("/api/status", bearer: Self.token)
        #expect(waiting.0 == 429 && waiting.1["error"]?.stringValue?.contains("too many wrong tokens") == true)
    }
}

/// A page served on another port of 127.0.0.1: another origin of the same site, as another local web app is.
final class StaticPage: Sendable {
    let url: String
    private let serving: Task<Void, any Error>

    private init(url: String, serving: Task<Void, any Error>) {
        self.url = url
        self.serving = serving
    }

    static func start(html: String) async throws -> StaticPage {
        let router = Router()
        router.get("page") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
        }
        let (bound, onBound) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in onBound.yield(channel.localAddress?.port ?? 0) })
        let serving = Task { try await application.run() }
        var port = 0
        for await value in bound {
            port = value
            break
        }
        return StaticPage(url: "http://127.0.0.1:\(port)/page", serving: serving)
    }

    func stop() async {
        serving.cancel()
        _ = try? await serving.value
    }
}
