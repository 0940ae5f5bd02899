import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import Dashboard

/// Who may read and act, tested on the dashboard's routes in-process: reads behind the token, actions only from the
/// dashboard's own origin with the session's CSRF token, sign-in attempts slowed down, sign-out that ends a session.
@Suite struct AccessTests {
    static let token = "dashboard-token-1234"

    /// A dashboard over a state folder without a ledger: reads answer with no workflows, and an action that gets
    /// past the guard finds no item (404), which tells it from a refusal (401, 403, 429).
    static func application(_ access: DashboardAccess, throttle: LoginThrottle = LoginThrottle())
        -> some ApplicationProtocol
    {
        let source = DashboardSource.stateFolder(
            location: "/nowhere", openLedger: { nil }, requestCancel: { _ in true },
            requestRetry: { _ in StateFolderRetry(items: []) })
        return Application(
            router: DashboardServer.router(source: source, host: "127.0.0.1", access: access, throttle: throttle))
    }

    /// The headers a browser sends with a request from the dashboard's own page (the test client's host is
    /// `localhost`).
    static let sameOrigin: HTTPFields = [.origin: "http://localhost", .secFetchSite: "same-origin"]

    static func body(_ json: String) -> ByteBuffer { ByteBuffer(string: json) }

    /// Signs in with the form's request; returns the session's cookie and its CSRF token (read from the page, as the
    /// page's script reads it).
    static func signIn(_ client: some TestClientProtocol) async throws -> (cookie: String, csrf: String) {
        let response = try await client.execute(
            uri: "/login", method: .post, headers: sameOrigin, body: body(#"{"token": "\#(token)"}"#))
        #expect(response.status == .ok)
        let setCookie = try #require(response.headers[.setCookie])
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"), "\(setCookie)")
        let cookie = String(setCookie.prefix { $0 != ";" })
        let page = try await client.execute(uri: "/", method: .get, headers: [.cookie: cookie])
        let html = String(buffer: page.body)
        let marker = #"<meta name="csrf-token" content=""#
        let start = try #require(html.range(of: marker)).upperBound
        let csrf = String(html[start...].prefix { $0 != "\"" })
        #expect(csrf.count == 64, "\(csrf)")
        return (cookie, csrf)
    }

    @Test func readsNeedTheTokenUnlessTheyArePublic() async throws {
        try await Self.application(DashboardAccess(token: Self.token)).test(.router) { client in
            let anonymous = try await client.execute(uri: "/api/status", method: .get)
            #expect(anonymous.status == .unauthorized)
            #expect(String(buffer: anonymous.body).contains("sign in"))
            for path in ["/api/items?status=failed", "/api/items/1", "/api/events"] {
                #expect(try await client.execute(uri: path, method: .get).status == .unauthorized, "\(path)")
            }
            // The page itself loads, with nothing of the batch in it: only the sign-in form.
            let page = try await client.execute(uri: "/", method: .get)
            #expect(page.status == .ok)
            let html = String(buffer: page.body)
            #expect(html.contains(#"data-may-read="false""#) && html.contains(#"id="initial-status">null<"#))
            let bearer = try await client.execute(
                uri: "/api/status", method: .get, headers: [.authorization: "Bearer \(Self.token)"])
            #expect(bearer.status == .ok)
            let (cookie, _) = try await Self.signIn(client)
            let signedIn = try await client.execute(uri: "/api/status", method: .get, headers: [.cookie: cookie])
            #expect(signedIn.status == .ok)
            #expect(String(buffer: signedIn.body).contains(#""signedIn":true"#))
        }
        try await Self.application(DashboardAccess(token: Self.token, publicReads: true)).test(.router) { client in
            #expect(try await client.execute(uri: "/api/status", method: .get).status == .ok)
            let action = try await client.execute(uri: "/api/items/1/cancel", method: .post, headers: Self.sameOrigin)
            #expect(action.status == .unauthorized, "actions still need the token")
        }
        try await Self.application(DashboardAccess()).test(.router) { client in
            #expect(try await client.execute(uri: "/api/status", method: .get).status == .ok)
            for uri in [
                "/api/items/1/cancel", "/api/workers/prune", "/api/items/retry", "/api/workers/w/drain",
                "/api/workers/w/stop",
            ] {
                let action = try await client.execute(
                    uri: uri, method: .post, headers: [.authorization: "Bearer \(Self.token)"])
                #expect(action.status == .forbidden, "\(uri): read-only without a token")
            }
        }
    }

    @Test func onlyTheDashboardsOwnPageActs() async throws {
        try await Self.application(DashboardAccess(token: Self.token)).test(.router) { client in
            let (cookie, csrf) = try await Self.signIn(client)
            let signedIn: HTTPFields = [.cookie: cookie, .csrfToken: csrf]
            func cancel(_ headers: HTTPFields) async throws -> HTTPResponse.Status {
                try await client.execute(uri: "/api/items/7/cancel", method: .post, headers: headers).status
            }
            // Past the guard: no such item.
            #expect(try await cancel(signedIn + Self.sameOrigin) == .notFound)
            // A page on another port of this host (same site, other origin), a form from anywhere, another site.
            #expect(try await cancel(signedIn + [.origin: "http://localhost:9999"]) == .forbidden)
            #expect(try await cancel(signedIn + [.origin: "http://evil.example"]) == .forbidden)
            #expect(try await cancel(signedIn + [.origin: "null"]) == .forbidden)
            #expect(try await cancel(signedIn + [.secFetchSite: "same-site"]) == .forbidden)
            #expect(try await cancel(signedIn + [.secFetchSite: "cross-site"]) == .forbidden)
            // The session's cookie alone, or with another token, is not enough.
            #expect(try await cancel([.cookie: cookie] + Self.sameOrigin) == .forbidden)
            let otherToken = (csrf.first == "0" ? "1" : "0") + csrf.dropFirst()
            #expect(try await cancel([.cookie: cookie, .csrfToken: otherToken]) == .forbidden)
            #expect(try await cancel(Self.sameOrigin) == .unauthorized)
            // Scripts: the bearer header, never from another origin.
            let bearer: HTTPFields = [.authorization: "Bearer \(Self.token)"]
            #expect(try await cancel(bearer) == .notFound)
            #expect(try await cancel(bearer + [.origin: "http://evil.example"]) == .forbidden)
            // Every action keeps to the same rules: a retry, forgetting the stopped workers, retrying every failed
            // item, draining and stopping one.
            for uri in [
                "/api/items/7/retry", "/api/workers/prune", "/api/items/retry", "/api/workers/w/drain",
                "/api/workers/w/stop",
            ] {
                func act(_ headers: HTTPFields) async throws -> HTTPResponse.Status {
                    try await client.execute(uri: uri, method: .post, headers: headers).status
                }
                #expect(try await act(signedIn + [.origin: "http://evil.example"]) == .forbidden, "\(uri)")
                #expect(try await act([.cookie: cookie, .csrfToken: otherToken]) == .forbidden, "\(uri)")
                #expect(try await act(Self.sameOrigin) == .unauthorized, "\(uri)")
                #expect(try await act(bearer + [.origin: "http://evil.example"]) == .forbidden, "\(uri)")
            }
            // Signing in from another page is refused too.
            let login = try await client.execute(
                uri: "/login", method: .post, headers: [.origin: "http://localhost:9999"],
                body: Self.body(#"{"token": "\#(Self.token)"}"#))
            #expect(login.status == .forbidden && login.headers[.setCookie] == nil)
        }
    }

    @Test func wrongTokensAreSlowedDown() async throws {
        let clock = ManualClock()
        let throttle = LoginThrottle(now: { clock.now })
        try await Self.application(DashboardAccess(token: Self.token), throttle: throttle).test(.router) { client in
            func login(_ token: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/login", method: .post, headers: Self.sameOrigin, body: Self.body("token=\(token)"))
            }
            var statuses: [HTTPResponse.Status] = []
            for guess in 0..<300 { statuses.append(try await login("guess-\(guess)").status) }
            // The free tries and the one that starts the first wait are looked at; the other 294 are not.
            #expect(statuses.prefix(6).allSatisfy { $0 == .unauthorized }, "\(statuses.prefix(8))")
            #expect(statuses.dropFirst(6).allSatisfy { $0 == .tooManyRequests })
            let wrong = try await login("guess")
            #expect(String(buffer: wrong.body).contains("too many wrong tokens"))
            #expect(wrong.headers[.retryAfter] == "1")
            // While it waits, the right token is not looked at either, nor a bearer token.
            #expect(try await login(Self.token).status == .tooManyRequests)
            let bearer = try await client.execute(
                uri: "/api/status", method: .get, headers: [.authorization: "Bearer \(Self.token)"])
            #expect(bearer.status == .tooManyRequests)
            clock.advance(by: .seconds(1))
            let right = try await login(Self.token)
            #expect(right.status == .ok && right.headers[.setCookie] != nil)
        }
        #expect(LoginThrottle.waitAfter(failuresOverFree: 3) == .seconds(4))
        #expect(LoginThrottle.waitAfter(failuresOverFree: 40) == LoginThrottle.longestWait)
    }

    @Test func aWrongTokenSaysSo() async throws {
        try await Self.application(DashboardAccess(token: Self.token)).test(.router) { client in
            let response = try await client.execute(
                uri: "/login", method: .post, headers: Self.sameOrigin, body: Self.body("token=not-it"))
            #expect(response.status == .unauthorized)
            #expect(String(buffer: response.body) == #"{"error":"wrong token"}"#)
            #expect(response.headers[.setCookie] == nil)
        }
    }

    @Test func signingOutEndsTheSession() async throws {
        try await Self.application(DashboardAccess(token: Self.token)).test(.router) { client in
            let (cookie, _) = try await Self.signIn(client)
            #expect(
                try await client.execute(uri: "/api/status", method: .get, headers: [.cookie: cookie]).status == .ok)
            let out = try await client.execute(
                uri: "/logout", method: .post, headers: [.cookie: cookie] + Self.sameOrigin)
            #expect(out.status == .ok)
            #expect(out.headers[.setCookie]?.contains("Max-Age=0") == true)
            // The old cookie, sent again (a copy of it, a browser that kept it), opens nothing.
            let after = try await client.execute(uri: "/api/status", method: .get, headers: [.cookie: cookie])
            #expect(after.status == .unauthorized)
        }
    }

    @Test func thePageRunsOnlyItsOwnScript() async throws {
        try await Self.application(DashboardAccess()).test(.router) { client in
            let page = try await client.execute(uri: "/", method: .get)
            let policy = try #require(page.headers[.contentSecurityPolicy])
            #expect(policy.contains("script-src 'sha256-\(DashboardAssets.scriptDigest)'"))
            #expect(policy.contains("frame-ancestors 'none'"))
        }
    }
}

/// A clock a test moves by hand.
final class ManualClock: Sendable {
    private let instant = NIOLockedValueBox(ContinuousClock.now)
    var now: ContinuousClock.Instant { instant.withLockedValue { $0 } }
    func advance(by duration: Duration) { instant.withLockedValue { $0 += duration } }
}

extension HTTPFields {
    static func + (left: HTTPFields, right: HTTPFields) -> HTTPFields {
        var fields = left
        fields.append(contentsOf: right)
        return fields
    }
}
