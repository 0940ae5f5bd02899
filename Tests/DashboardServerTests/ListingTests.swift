import Foundation
import Hummingbird
import HummingbirdTesting
import PipelineKit
import StageKit
import Testing

@testable import Dashboard

/// What the status API and the item lists say of a state folder's ledger, written as a run writes it: the files a
/// run has not started yet, long lists in pages, stages in the workflow's order.
@Suite struct ListingTests {
    static func get(_ client: some TestClientProtocol, _ uri: String) async throws -> JSONValue {
        let response = try await client.execute(uri: uri, method: .get)
        #expect(response.status == .ok, "\(uri)")
        return try JSONValue(parsing: String(buffer: response.body))
    }

    /// A run of five new files that has started two: the three others are queued from its first second, so the
    /// total is the plan's; the run's end leaves nothing queued.
    @Test func aRunCountsTheFilesItHasNotStarted() async throws {
        let fixture = try LedgerFixture()
        defer { fixture.remove() }
        let lock = try StateLock(folder: fixture.folder)
        defer { withExtendedLifetime(lock) {} }
        _ = try await fixture.admit("earlier")
        let run = try await fixture.ledger.beginRun(
            RunRecord(workflow: "w", file: "w.json", stages: ["a"], newItems: 5), caching: [], sightings: [])
        _ = try await fixture.admit("one")
        _ = try await fixture.admit("two")
        try await fixture.application().test(.router) { client in
            let workflow = try await Self.get(client, "/api/status")["workflows"]?.arrayValue?.first
            #expect(workflow?["counts"]?["queued"] == 3, "\(String(describing: workflow))")
            #expect(workflow?["counts"]?["running"] == 3)
            #expect(workflow?["total"] == 6)
        }
        try await fixture.ledger.finishRun(run, summary: RunSummary(items: 5))
        try await fixture.application().test(.router) { client in
            let workflow = try await Self.get(client, "/api/status")["workflows"]?.arrayValue?.first
            #expect(workflow?["counts"]?["queued"] == 0, "\(String(describing: workflow))")
        }
    }

    /// A run killed before it finished (no process holds the folder, or one that took it later) has no files coming:
    /// the overview counts none queued, by the rule that has the run history call it interrupted.
    @Test func aKilledRunCountsNoQueuedFiles() async throws {
        let fixture = try LedgerFixture()
        defer { fixture.remove() }
        var lock: StateLock? = try StateLock(folder: fixture.folder)
        _ = try await fixture.ledger.beginRun(
            RunRecord(workflow: "w", file: "w.json", stages: ["a"], newItems: 4), caching: [], sightings: [])
        _ = try await fixture.admit("one")
        func counts() async throws -> (queued: JSONValue?, run: JSONValue?) {
            try await fixture.application().test(.router) { client in
                let workflow = try await Self.get(client, "/api/status")["workflows"]?.arrayValue?.first
                let runs = try await Self.get(client, "/api/runs")["runs"]?.arrayValue?.first
                return (workflow?["counts"]?["queued"], runs?["outcome"])
            }
        }
        let held = try await counts()
        #expect(held.queued == 3 && held.run == "running", "\(held)")
        withExtendedLifetime(lock) {}
        lock = nil
        let killed = try await counts()
        #expect(killed.queued == 0 && killed.run == "interrupted", "\(killed)")
    }

    /// 260 failures are read in pages, each saying how many there are in all, the most recent first, none twice.
    @Test func failuresComeInPagesWithTheirTotal() async throws {
        let fixture = try LedgerFixture()
        defer { fixture.remove() }
        _ = try await fixture.ledger.beginRun(
            RunRecord(workflow: "w", file: "w.json", stages: ["a"]), caching: [], sightings: [])
        var ids: [Int64] = []
        for index in 0..<260 { ids.append(try await fixture.admit("f\(index)")) }
        let failed = ids
        try await fixture.ledger.setStatus(.failed, of: failed)
        _ = try await fixture.admit("running")
        try await fixture.application().test(.router) { client in
            let first = try await Self.get(client, "/api/items?status=failed&limit=200")
            #expect(first["total"] == 260 && first["items"]?.arrayValue?.count == 200)
            let second = try await Self.get(client, "/api/items?status=failed&limit=200&offset=200")
            #expect(second["total"] == 260 && second["offset"] == 200)
            let ids = ((first["items"]?.arrayValue ?? []) + (second["items"]?.arrayValue ?? [])).compactMap {
                $0["id"]?.intValue
            }
            #expect(Set(ids) == Set(failed.map(Int.init)) && ids.count == 260)
        }
    }

    /// An item's stages in the order the workflow declares them, not the order they started in.
    @Test func stagesAreInTheWorkflowsOrder() async throws {
        let fixture = try LedgerFixture()
        defer { fixture.remove() }
        _ = try await fixture.ledger.beginRun(
            RunRecord(workflow: "w", file: "w.json", stages: ["probe", "encode", "upload"]), caching: [],
            sightings: [])
        let id = try await fixture.admit("clip.mov")
        let started = Date()
        for (offset, stage) in ["upload", "probe", "encode"].enumerated() {
            var record = StageRecord(stage: stage, uses: "exec", status: .failed, optionsHash: "")
            record.startedAt = started.addingTimeInterval(Double(offset))
            if stage != "upload" { record.status = .succeeded }
            try await fixture.ledger.save(record, for: ItemVersion(item: id, version: 1))
        }
        try await fixture.ledger.setStatus(.failed, of: [id])
        try await fixture.application().test(.router) { client in
            let item = try await Self.get(client, "/api/items/\(id)")
            #expect(item["stages"]?.arrayValue?.map { $0["id"] } == ["probe", "encode", "upload"], "\(item)")
            let listed = try await Self.get(client, "/api/items?status=failed")
            let stages = listed["items"]?.arrayValue?.first?["stages"]?.arrayValue?.map { $0["id"] }
            #expect(stages == ["probe", "encode", "upload"], "\(listed)")
        }
    }
}
