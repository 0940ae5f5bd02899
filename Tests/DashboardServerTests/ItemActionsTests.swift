import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PipelineKit
import StageKit
import Testing

@testable import Dashboard

/// The actions an item's document offers, which are the buttons its page shows: only those the server takes for
/// this caller and this item.
@Suite struct ItemActionsTests {
    static let token = "dashboard-token-1234"

    static func actions(_ client: some TestClientProtocol, _ id: Int64, _ headers: HTTPFields = [:]) async throws
        -> [String]?
    {
        let response = try await client.execute(uri: "/api/items/\(id)", method: .get, headers: headers)
        #expect(response.status == .ok)
        return try JSONValue(parsing: String(buffer: response.body))["actions"]?.arrayValue?.compactMap(\.stringValue)
    }

    @Test func onlyActionsTheServerTakesAreOffered() async throws {
        let fixture = try LedgerFixture()
        defer { fixture.remove() }
        _ = try await fixture.ledger.beginRun(
            RunRecord(workflow: "w", file: "w.json", stages: ["a"]), caching: [], sightings: [])
        let running = try await fixture.admit("running")
        let failed = try await fixture.admit("failed")
        try await fixture.ledger.setStatus(.failed, of: [failed])
        let bearer: HTTPFields = [.authorization: "Bearer \(Self.token)"]
        // Read-only (no token): nothing, whoever asks.
        try await fixture.application().test(.router) { client in
            let offered1 = try await Self.actions(client, running)
            #expect(offered1 == [String]())
            let offered2 = try await Self.actions(client, running, bearer)
            #expect(offered2 == [String]())
        }
        // Reads open to everyone: nothing for them; the token's holder cancels a running item and retries a failed
        // one (a state folder's runs again under its watch, or at its next run).
        try await fixture.application(access: DashboardAccess(token: Self.token, publicReads: true)).test(.router) {
            client in
            let offered3 = try await Self.actions(client, running)
            #expect(offered3 == [String]())
            let offered4 = try await Self.actions(client, running, bearer)
            #expect(offered4 == ["cancel"])
            let offered5 = try await Self.actions(client, failed, bearer)
            #expect(offered5 == ["retry"])
        }
    }
}
