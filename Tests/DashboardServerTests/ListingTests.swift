import Foundation
import Hummingbird
import HummingbirdTesting
import PipelineKit
import StageKit
import Testing

@testable import Dashboard

/// What the status API and the item lists say of a state folder's ledger, written as a run writes it: the files a
/// run has not started yet.
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
}
