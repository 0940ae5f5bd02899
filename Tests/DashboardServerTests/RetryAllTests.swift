import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PipelineKit
import SharedBatch
import StageKit
import TestSupport
import Testing

@testable import Dashboard

/// `POST /api/items/retry`: a shared batch's failed items (a real PostgreSQL) queued again at once, narrowed by the
/// list's filters, behind the guard every action has; a state folder's answered with what its next run does.
@Suite struct RetryAllTests {
    static let token = AccessTests.token
    static let bearer: HTTPFields = [.authorization: "Bearer \(token)"]

    /// Three failed items a submit queued (two `http`, one `damaged-input`) and one it refused, never queued.
    static func failedBatch() async throws -> (BatchDatabase, queued: [Int64], refused: Int64) {
        let database = try await BatchDatabase(url: try await RunHistoryTests.postgres.value.createDatabase())
        let (store, queue) = (PostgresStore(database: database), BatchQueue(database: database))
        let workflow = try await queue.store(
            SubmittedWorkflow(
                name: "w", file: "/w.json", document: Data("{}".utf8), vars: [:], digest: "d", stages: ["a"]))
        var refs: [ItemVersion] = []
        for name in ["one.mov", "two.mov", "three.mov", "refused.mov"] {
            let input = InputItem(path: "/in/\(name)", relativePath: name, size: 10, modified: 0)
            let admission = ItemAdmission(item: nil, newVersion: false, fingerprint: "fp-\(name)", input: input)
            refs.append(try await store.admit(admission, workflow: "w").ref)
        }
        try await queue.enqueue(Dictionary(uniqueKeysWithValues: refs.prefix(3).map { ($0.item, "d") }), with: workflow)
        for (ref, kind) in zip(refs, ["http", "http", "damaged-input", "output-collision"]) {
            let result = ItemResult(
                ref: ref, fingerprint: nil, path: "", outcome: .failed, reason: "bad",
                errorKind: ErrorKind(rawValue: kind))
            try await store.finish(ref, result: result, digest: nil)
        }
        return (database, refs.prefix(3).map(\.item), refs[3].item)
    }

    static func retry(_ client: some TestClientProtocol, _ query: String = "", _ headers: HTTPFields = bearer)
        async throws -> (HTTPResponse.Status, JSONValue)
    {
        let response = try await client.execute(uri: "/api/items/retry" + query, method: .post, headers: headers)
        return (response.status, (try? JSONValue(parsing: String(buffer: response.body))) ?? .null)
    }

    @Test func aSharedBatchsFailedItemsAreQueuedAgain() async throws {
        let (database, queued, refused) = try await Self.failedBatch()
        let queue = BatchQueue(database: database)
        let access = DashboardAccess(token: Self.token, publicReads: true)
        let router = DashboardServer.router(source: .sharedBatch(database), host: "127.0.0.1", access: access)
        try await Application(router: router).test(.router) { client in
            // The list offers the retry of all to the token's holder only.
            let offered = try await client.execute(uri: "/api/items?status=failed", method: .get, headers: Self.bearer)
            #expect(try JSONValue(parsing: String(buffer: offered.body))["actions"] == ["retry"])
            let anonymous = try await client.execute(uri: "/api/items?status=failed", method: .get)
            #expect(try JSONValue(parsing: String(buffer: anonymous.body))["actions"] == [])
            #expect(try await Self.retry(client, "", AccessTests.sameOrigin).0 == .unauthorized)
            for query in ["?status=done", "?sort=name", "?limit=5"] {
                #expect(try await Self.retry(client, query).0 == .badRequest, "\(query)")
            }
            let (status, http) = try await Self.retry(client, "?error=http")
            #expect(status == .ok && http["failed"] == 2 && http["queued"] == 2, "\(http)")
            #expect(try await queue.queueState(of: queued + [refused]).queued == Set(queued.prefix(2)))
            // The rest: the damaged item is queued, the refused one cannot be (a submit never queued it).
            let (_, rest) = try await Self.retry(client)
            #expect(rest["failed"] == 2 && rest["queued"] == 1, "\(rest)")
            #expect(try await queue.queueState(of: queued + [refused]).queued == Set(queued))
            // A signed-in page acts with its session's CSRF token, never without it.
            let (cookie, csrf) = try await AccessTests.signIn(client)
            let forged = try await Self.retry(client, "", [.cookie: cookie] + AccessTests.sameOrigin)
            #expect(forged.0 == .forbidden)
            let page = try await Self.retry(client, "", [.cookie: cookie, .csrfToken: csrf] + AccessTests.sameOrigin)
            #expect(page.0 == .ok && page.1["failed"] == 1 && page.1["queued"] == 0, "\(page)")
        }
        await database.close()
    }

    /// A state folder's failed items, with no process holding the folder: both retries leave requests in its ledger
    /// for the next run and say so (202); an item that has not failed is refused (409); the lists offer the retry.
    @Test func aStateFoldersFailedItemsAreQueuedForItsNextRun() async throws {
        let fixture = try LedgerFixture()
        defer { fixture.remove() }
        _ = try await fixture.ledger.beginRun(
            RunRecord(workflow: "w", file: "w.json", stages: ["a"]), caching: [], sightings: [])
        let (a, b, done) = (
            try await fixture.admit("a.mov"), try await fixture.admit("b"), try await fixture.admit("c")
        )
        try await fixture.ledger.setStatus(.failed, of: [a, b])
        try await fixture.ledger.setStatus(.succeeded, of: [done])
        try await fixture.application(access: DashboardAccess(token: Self.token)).test(.router) { client in
            let list = try await client.execute(uri: "/api/items?status=failed", method: .get, headers: Self.bearer)
            #expect(try JSONValue(parsing: String(buffer: list.body))["actions"] == ["retry"])
            let notFailed = try await client.execute(
                uri: "/api/items/\(done)/retry", method: .post, headers: Self.bearer)
            #expect(notFailed.status == .conflict)
            #expect(String(buffer: notFailed.body).contains("has not failed"), "\(notFailed)")
            let one = try await client.execute(uri: "/api/items/\(a)/retry", method: .post, headers: Self.bearer)
            let answer = try JSONValue(parsing: String(buffer: one.body))
            #expect(one.status == .accepted && answer["outcome"] == "queued for the next pipeline run", "\(answer)")
            #expect(try await fixture.ledger.retryRequests(workflow: "w") == [a: "/in/a.mov"])
            let (status, all) = try await Self.retry(client, "?q=b")
            #expect(status == .accepted && all["failed"] == 1 && all["queued"] == 1, "\(all)")
            #expect(all["outcome"] == "queued for the next pipeline run", "\(all)")
            #expect(try await fixture.ledger.retryRequests(workflow: "w") == [a: "/in/a.mov", b: "/in/b"])
        }
    }
}
