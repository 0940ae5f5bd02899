import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import PipelineKit
import StageKit
import TestSupport
import Testing

@testable import Dashboard

#if canImport(Glibc)
    import Glibc
#endif

/// The status pushed as server-sent events: sent when it changes (its time aside), a read that fails said as such, the
/// stream ended once its caller may not read or has gone, streams beyond the limit refused; and through the
/// dashboard's own route, the running stages' progress in the status it sends and a sign-out that ends the stream.
@Suite struct StatusStreamTests {
    /// The events of a stream's body: each one's name and its data.
    static func events(_ body: String) -> [(name: String, data: JSONValue)] {
        body.components(separatedBy: "\n\n").compactMap { block in
            let lines = block.split(separator: "\n")
            guard let name = lines.first(where: { $0.hasPrefix("event: ") })?.dropFirst(7),
                let data = lines.first(where: { $0.hasPrefix("data: ") })?.dropFirst(6)
            else { return nil }
            return (String(name), (try? JSONValue(parsing: String(data))) ?? .null)
        }
    }

    /// A stream over a feed of `readings`, one after the other (the last again and again), each read once the stream
    /// took the one before (so none is dropped for a newer one); the caller may read while `mayRead` says so.
    final class Scripted: Sendable {
        let readings: [StatusFeed.Reading]
        let taken = NIOLockedValueBox((read: 0, taken: 0))
        let feed: StatusFeed
        let stream: StatusStream

        init(
            _ readings: [StatusFeed.Reading], timing: StatusStream.Timing,
            mayRead: @escaping @Sendable (_ taken: Int) -> Bool = { _ in true }
        ) {
            self.readings = readings
            let taken = taken
            feed = StatusFeed(interval: timing.interval, limit: timing.limit) {
                try? await waitUntil("the stream takes the last reading", limit: .seconds(5)) {
                    taken.withLockedValue { $0.read == $0.taken }
                }
                let index = taken.withLockedValue { state in
                    defer { state.read += 1 }
                    return min(state.read, readings.count - 1)
                }
                return readings[index]
            }
            stream = StatusStream(
                timing: timing, feed: feed,
                mayRead: {
                    mayRead(
                        taken.withLockedValue { state in
                            state.taken += 1
                            return state.taken
                        })
                }, adapt: { $0 })
        }

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.get("events") { [stream] _, _ in await stream.response() }
            return router
        }
    }

    @Test func aStatusIsSentWhenItChangesAndTheStreamEndsWhenReadsAreRefused() async throws {
        let script = Scripted(
            [
                .status(["time": "10:00:00", "done": 1]), .status(["time": "10:00:01", "done": 1]),
                .status(["time": "10:00:02", "done": 2]), .unreadable("the database is restarting"),
                .status(["time": "10:00:04", "done": 2]), .status(["time": "10:00:05", "done": 3]),
            ], timing: .init(interval: .milliseconds(5), lifetime: .seconds(60)),
            // Signed out before the sixth reading.
            mayRead: { $0 < 6 })
        try await Application(router: script.router()).test(.router) { client in
            let response = try await client.execute(uri: "/events", method: .get)
            #expect(response.headers[.contentType]?.hasPrefix("text/event-stream") == true)
            let body = String(buffer: response.body)
            #expect(body.hasPrefix("retry: 1000\n\n"))
            let events = Self.events(body)
            #expect(events.map(\.name) == ["status", "status", "unreadable", "status"], "\(body)")
            #expect(events.map { $0.data["done"] } == [1, 2, nil, 2])
            #expect(events[2].data["error"] == "the database is restarting")
            #expect(body.components(separatedBy: ":\n\n").count == 2, "one reading told nothing new: \(body)")
        }
        try await waitUntil("the feed stops reading", limit: .seconds(10)) { await script.feed.followers == 0 }
    }

    @Test func streamsBeyondTheLimitAreRefusedUntilOneEnds() async throws {
        let open = NIOLockedValueBox(true)
        let script = Scripted(
            [.status(["time": "10:00:00", "done": 1])],
            timing: .init(interval: .milliseconds(5), lifetime: .seconds(600), limit: 1),
            mayRead: { _ in open.withLockedValue { $0 } })
        try await Application(router: script.router()).test(.router) { client in
            let first = Task { try await client.execute(uri: "/events", method: .get) }
            try await waitUntil("the first stream follows the feed", limit: .seconds(10)) {
                await script.feed.followers == 1
            }
            let refused = try await client.execute(uri: "/events", method: .get)
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.headers[.retryAfter] == String(StatusStream.retryAfter))
            #expect(String(buffer: refused.body).contains("too many open status streams"))
            open.withLockedValue { $0 = false }
            #expect(try await first.value.status == .ok)
            try await waitUntil("the first stream left", limit: .seconds(10)) { await script.feed.followers == 0 }
            #expect(try await client.execute(uri: "/events", method: .get).status == .ok)
        }
    }

    @Test func aStreamEndsSoonAfterItsClientWentAway() async throws {
        // The status never changes: only the comment lines written each quiet reading find the connection closed.
        let script = Scripted(
            [.status(["time": "10:00:00", "done": 1])],
            timing: .init(interval: .milliseconds(50), lifetime: .seconds(600)))
        try await Application(router: script.router()).test(.live) { client in
            let port = try #require(client.port)
            let curl = try Binary.start(
                ["-sSN", "-H", "Host: localhost", "http://127.0.0.1:\(port)/events"],
                in: FileManager.default.temporaryDirectory,
                executable: URL(fileURLWithPath: "/usr/bin/curl"))
            defer { if curl.isRunning { curl.signal(SIGKILL) } }
            try await waitUntil("the first event", limit: .seconds(30)) { curl.stdout.soFar.contains("event: status") }
            #expect(await script.feed.followers == 1)
            curl.signal(SIGKILL)
            _ = await curl.exit()
            try await waitUntil("the stream ends", limit: .seconds(30)) { await script.feed.followers == 0 }
        }
    }

    @Test func signingOutEndsTheStreamOfTheSession() async throws {
        let router = DashboardServer.router(
            source: .stateFolder(
                location: "/nowhere", openLedger: { nil }, requestCancel: { _ in true },
                requestRetry: { _ in StateFolderRetry(items: []) }),
            host: "127.0.0.1", access: DashboardAccess(token: AccessTests.token),
            streamTiming: .init(interval: .milliseconds(50), lifetime: .seconds(600)))
        try await Application(router: router).test(.live) { client in
            let port = try #require(client.port)
            let (cookie, _) = try await AccessTests.signIn(client)
            let curl = try Binary.start(
                ["-sSN", "-H", "Host: localhost", "-H", "Cookie: \(cookie)", "http://127.0.0.1:\(port)/api/events"],
                in: FileManager.default.temporaryDirectory, executable: URL(fileURLWithPath: "/usr/bin/curl"))
            defer { if curl.isRunning { curl.signal(SIGKILL) } }
            try await waitUntil("the first event", limit: .seconds(30)) { curl.stdout.soFar.contains("event: status") }
            #expect(curl.stdout.soFar.contains(#""signedIn":true"#), "\(curl.stdout.soFar)")
            let out = try await client.execute(
                uri: "/logout", method: .post, headers: [.cookie: cookie] + AccessTests.sameOrigin)
            #expect(out.status == .ok)
            // The server ends the stream (curl ends well), long before its 10 minutes.
            #expect(await curl.exit() == 0)
        }
    }

    @Test func theDashboardsStreamCarriesTheRunningStagesProgress() async throws {
        let fixture = try LedgerFixture()
        defer { fixture.remove() }
        _ = try await fixture.ledger.beginRun(
            RunRecord(workflow: "w", file: "w.json", stages: ["export"]), caching: [], sightings: [])
        _ = try await fixture.admit("clip.mov")
        var stage = try #require(
            RunningStage(document: [
                "item": "clip.mov", "stage": "export", "startedAt": "2026-11-29T10:00:00Z", "completed": 30,
                "total": 120, "unit": "seconds", "rate": 2.0,
            ]))
        stage.completed = 40
        let running = stage
        let folder = fixture.folder
        let source = DashboardSource.stateFolder(
            location: folder.path, openLedger: { try SQLiteLedger(readingOnly: folder) }, requestCancel: { _ in false },
            requestRetry: { _ in StateFolderRetry(items: []) }, progress: { ["w": [running]] })
        let router = DashboardServer.router(
            source: source, host: "127.0.0.1", access: DashboardAccess(),
            streamTiming: .init(interval: .milliseconds(20), lifetime: .milliseconds(300)))
        try await Application(router: router).test(.router) { client in
            let body = String(buffer: try await client.execute(uri: "/api/events", method: .get).body)
            let events = Self.events(body)
            #expect(events.map(\.name) == ["status"], "the status does not change: it is sent once")
            let status = try #require(events.first?.data)
            #expect(status["workflows"]?.arrayValue?.first?["counts"]?["running"] == 1)
            let progress = try #require(status["progress"]?.arrayValue?.first)
            #expect(progress["workflow"] == "w" && progress["item"] == "clip.mov" && progress["stage"] == "export")
            #expect(progress["completed"] == 40 && progress["total"] == 120 && progress["etaSeconds"] == 40.0)
        }
    }
}
