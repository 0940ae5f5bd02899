import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import PipelineKit
import StageKit
import Testing

@testable import Dashboard

/// The status pushed as server-sent events: sent when it changes (its time aside), a read that fails said as such, the
/// stream ended once its caller may not read; and through the dashboard's own route, the running stages' progress
/// in the status it sends.
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

    @Test func aStatusIsSentWhenItChangesAndTheStreamEndsWhenReadsAreRefused() async throws {
        let readings: [StatusStream.Reading] = [
            .status(["time": "10:00:00", "done": 1]), .status(["time": "10:00:01", "done": 1]),
            .status(["time": "10:00:02", "done": 2]), .unreadable("the database is restarting"),
            .status(["time": "10:00:04", "done": 2]), .refused, .status(["time": "10:00:06", "done": 3]),
        ]
        let next = NIOLockedValueBox(0)
        let stream = StatusStream(timing: .init(interval: .milliseconds(5), lifetime: .seconds(60))) {
            readings[
                next.withLockedValue { index in
                    defer { index += 1 }
                    return min(index, readings.count - 1)
                }]
        }
        let router = Router()
        router.get("events") { _, _ in stream.response() }
        try await Application(router: router).test(.router) { client in
            let response = try await client.execute(uri: "/events", method: .get)
            #expect(response.headers[.contentType]?.hasPrefix("text/event-stream") == true)
            let body = String(buffer: response.body)
            #expect(body.hasPrefix("retry: 1000\n\n"))
            let events = Self.events(body)
            #expect(events.map(\.name) == ["status", "status", "unreadable", "status"], "\(body)")
            #expect(events.map { $0.data["done"] } == [1, 2, nil, 2])
            #expect(events[2].data["error"] == "the database is restarting")
        }
        #expect(next.withLockedValue { $0 } == 6, "no read after the refusal")
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
            progress: { ["w": [running]] })
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
