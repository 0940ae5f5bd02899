import Foundation
import Hummingbird
import HummingbirdTesting
import PipelineKit
import SharedBatch
import StageKit
import TestSupport
import Testing

@testable import Dashboard

/// Finding items through `/api/items`, on a state folder's ledger and on a shared batch's PostgreSQL (a real
/// server): by name, status, error kind, stage and worker, sorted, in pages, each answer with the filtered total;
/// what is not understood answered with 400.
@Suite struct FindingTests {
    /// One PostgreSQL server for the suite; each test has a database of its own.
    static let postgres = Task { try await PostgresServer.start() }

    /// A ledger of either kind holding ``Findings``, then what `then` writes, and a dashboard over it; `body` asks
    /// the dashboard.
    static func finding(
        in store: Findings.Store, then: (any LedgerBrowsing, BatchQueue?) async throws -> Void = { _, _ in },
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        switch store {
        case .stateFolder:
            let fixture = try LedgerFixture()
            defer { fixture.remove() }
            try await Findings.write(into: fixture.ledger)
            try await then(fixture.ledger, nil)
            try await fixture.application().test(.router, body)
        case .sharedBatch:
            let database = try await BatchDatabase(url: try await postgres.value.createDatabase())
            let (store, queue) = (PostgresStore(database: database), BatchQueue(database: database))
            try await Findings.write(into: store, queue: queue)
            try await then(store, queue)
            let router = DashboardServer.router(
                source: .sharedBatch(database), host: "127.0.0.1", access: DashboardAccess())
            try await Application(router: router).test(.router, body)
            await database.close()
        }
    }

    /// The names (relative paths) of a list's items, in its order, and its total.
    static func names(_ client: any TestClientProtocol, _ query: String) async throws -> (names: [String], total: Int) {
        let list = try await ListingTests.get(client, "/api/items?" + query)
        let names = (list["items"]?.arrayValue ?? []).compactMap { $0["relativePath"]?.stringValue }
        return (names, list["total"]?.intValue ?? -1)
    }

    @Test(arguments: Findings.Store.allCases) func byNameContained(_ store: Findings.Store) async throws {
        try await Self.finding(in: store) { client in
            let beta = try await Self.names(client, "q=BETA")
            #expect(Set(beta.names) == ["beta.mov", "beta-v.mov"] && beta.total == 2, "\(beta)")
            // `%` and `_` are letters of a name, not wildcards.
            #expect(try await Self.names(client, "q=%25") == (["epsilon%.mp4"], 1))
            #expect(try await Self.names(client, "q=_1") == (["delta_1.mp4"], 1))
            #expect(try await Self.names(client, "q=MOV&workflow=v") == (["beta-v.mov"], 1))
            #expect(try await Self.names(client, "q=nothing-like-it") == ([], 0))
        }
    }

    @Test(arguments: Findings.Store.allCases) func byStatus(_ store: Findings.Store) async throws {
        try await Self.finding(in: store) { client in
            let failed = try await Self.names(client, "status=failed")
            #expect(Set(failed.names) == ["beta.mov", "gamma.MOV", "delta_1.mp4", "beta-v.mov"] && failed.total == 4)
            #expect(try await Self.names(client, "status=done").total == Findings.bulk + 1)
            #expect(try await Self.names(client, "status=cancelled") == (["zeta.mov"], 1))
            // A running item names the stage it runs.
            let held = try await ListingTests.get(client, "/api/items?status=running&q=epsilon")
            #expect(held["items"]?.arrayValue?.first?["stage"] == "encode", "\(held)")
            let running = try await Self.names(client, "status=running")
            let queued = try await Self.names(client, "status=queued")
            switch store {
            case .stateFolder:
                // A state folder's admitted, unfinished items run; its unstarted files are not items.
                #expect(Set(running.names) == ["epsilon%.mp4", "omega.mov"] && running.total == 2)
                #expect(queued == ([], 0))
            case .sharedBatch:
                // A worker holds one; the other waits in the queue.
                #expect(running == (["epsilon%.mp4"], 1))
                #expect(queued == (["omega.mov"], 1))
            }
        }
    }

    @Test(arguments: Findings.Store.allCases) func byErrorKind(_ store: Findings.Store) async throws {
        try await Self.finding(in: store) { client in
            let damaged = try await Self.names(client, "error=damaged-input")
            #expect(Set(damaged.names) == ["beta.mov", "beta-v.mov"] && damaged.total == 2)
            #expect(try await Self.names(client, "error=http&status=failed") == (["delta_1.mp4"], 1))
            #expect(try await Self.names(client, "error=output-collision&q=gamma") == (["gamma.MOV"], 1))
            #expect(try await Self.names(client, "error=network") == ([], 0))
            let filters = try await ListingTests.get(client, "/api/filters")
            #expect(filters["errorKinds"] == ["damaged-input", "http", "output-collision"])
            #expect(filters["stages"] == ["probe", "encode", "upload"])
        }
    }

    /// An item run again (admitted by a run, or queued by `submit --failed`) keeps its last error until it ends: it
    /// is no failure of that kind, and the kind is not offered while no failed item has it.
    @Test(arguments: Findings.Store.allCases) func anItemRunAgainIsNoFailure(_ store: Findings.Store) async throws {
        try await Self.finding(
            in: store,
            then: { ledger, queue in
                let found = try await ledger.items(matching: ItemQuery(name: "delta_1"))
                let item = try #require(found.items.first?.item)
                if let queue {
                    let workflow = try await queue.store(
                        SubmittedWorkflow(
                            name: "w", file: "/w.json", document: Data("{}".utf8), vars: [:], digest: "d",
                            stages: Findings.stages))
                    try await queue.enqueue([item.id: "d"], with: workflow)
                } else {
                    let admission = ItemAdmission(
                        item: item.id, newVersion: true, fingerprint: item.fingerprint, input: item.input)
                    _ = try await ledger.admit(admission, workflow: "w")
                }
            }
        ) { client in
            #expect(try await Self.names(client, "error=http") == ([], 0))
            #expect(try await Self.names(client, "status=failed&q=delta") == ([], 0))
            let filters = try await ListingTests.get(client, "/api/filters")
            #expect(filters["errorKinds"] == ["damaged-input", "output-collision"])
        }
    }

    @Test(arguments: Findings.Store.allCases) func byStage(_ store: Findings.Store) async throws {
        try await Self.finding(in: store) { client in
            let probe = try await Self.names(client, "stage=probe")
            #expect(Set(probe.names) == ["beta.mov", "beta-v.mov"] && probe.total == 2)
            // Failed in the stage, or running it now; a stage that succeeded does not count.
            let encode = try await Self.names(client, "stage=encode")
            #expect(Set(encode.names) == ["gamma.MOV", "epsilon%.mp4"] && encode.total == 2, "\(encode)")
            #expect(try await Self.names(client, "stage=upload&workflow=w") == (["delta_1.mp4"], 1))
            let list = try await ListingTests.get(client, "/api/items?stage=encode&status=running")
            #expect(list["items"]?.arrayValue?.first?["stage"] == "encode")
        }
    }

    @Test(arguments: Findings.Store.allCases) func byWorker(_ store: Findings.Store) async throws {
        try await Self.finding(in: store) { client in
            switch store {
            case .stateFolder:
                let response = try await client.execute(uri: "/api/items?worker=worker-a", method: .get)
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("a state folder has no workers"))
            case .sharedBatch:
                #expect(try await Self.names(client, "worker=worker-a") == (["epsilon%.mp4"], 1))
                #expect(try await Self.names(client, "worker=worker-b") == ([], 0))
            }
        }
    }

    @Test(arguments: Findings.Store.allCases) func sortedAndPaged(_ store: Findings.Store) async throws {
        try await Self.finding(in: store) { client in
            let everything = Findings.bulk + 8
            let byName = try await Self.names(client, "sort=name&limit=500")
            #expect(byName.total == everything && byName.names.count == everything)
            #expect(byName.names == byName.names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            // Newest first: the item written last leads.
            let newest = try await ListingTests.get(client, "/api/items?limit=500")
            let times = (newest["items"]?.arrayValue ?? []).compactMap { $0["updatedAt"]?.stringValue }
            #expect(times == times.sorted(by: >) && times.count == everything)
            #expect(newest["items"]?.arrayValue?.first?["relativePath"] == "zeta.mov")
            // Pages of 10 over the named order: none twice, none left out, each with the total.
            var paged: [String] = []
            for offset in stride(from: 0, to: everything, by: 10) {
                let page = try await Self.names(client, "sort=name&limit=10&offset=\(offset)")
                #expect(page.total == everything)
                paged += page.names
            }
            #expect(paged == byName.names)
            #expect(try await Self.names(client, "sort=name&offset=\(everything)") == ([], everything))
            let filtered = try await Self.names(client, "q=bulk&sort=name&limit=5&offset=5")
            #expect(
                filtered.total == Findings.bulk
                    && filtered.names == Array(byName.names.filter { $0.hasPrefix("bulk") }[5..<10]))
        }
    }

    @Test(arguments: Findings.Store.allCases) func parametersNotUnderstoodAre400(_ store: Findings.Store) async throws {
        try await Self.finding(in: store) { client in
            let refused = [
                ("sort=size", "sort must be"), ("status=bogus", "status must be one of"),
                ("status=skipped", "skipped files are counted"), ("limit=-1", "limit must be"),
                ("limit=501", "limit must be"), ("offset=first", "offset must be"),
            ]
            for (query, message) in refused {
                let response = try await client.execute(uri: "/api/items?" + query, method: .get)
                #expect(response.status == .badRequest, "\(query)")
                let body = try JSONValue(parsing: String(buffer: response.body))
                #expect(body["error"]?.stringValue?.contains(message) == true, "\(query): \(body)")
            }
        }
    }
}
