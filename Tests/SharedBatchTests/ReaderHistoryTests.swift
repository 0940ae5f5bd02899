import Foundation
import PipelineKit
import StageKit
import TestSupport
import Testing

@testable import SharedBatch

/// A role that may only read a batch (a dashboard's) reads an item's history without its attempts when the batch has
/// no `stage_attempts` table it could add, or when it may not read that table; its versions and checkpoints still show.
@Suite struct ReaderHistoryTests {
    /// A batch with one item (version 1, a failed attempt recorded) and a role `reader` granted SELECT on the tables
    /// there are after `setUp` ran as the owner; returns the reader's store and the item.
    private func batch(
        _ server: PostgresServer, _ name: String, setUp: String
    ) async throws -> (PostgresStore, BatchDatabase, Int64) {
        let url = try await server.createDatabase(name)
        let owner = try await BatchDatabase(url: url, opening: .creatingBatch)
        let store = PostgresStore(database: owner)
        let input = InputItem(path: "/m/clip.mp4", relativePath: "clip.mp4", size: 10, modified: 0)
        let item = try await store.admit(
            ItemAdmission(item: nil, newVersion: false, fingerprint: "fp", input: input), workflow: "w"
        ).ref.item
        try await store.recordAttempt(
            StageAttempt(
                version: 1, stage: "up", attempt: 1, startedAt: Date(), finishedAt: Date(), seconds: 1,
                outcome: .failed, error: FailureReport(message: "refused", kind: .network)),
            of: item)
        await owner.close()
        _ = try await server.psql(
            setUp + "; CREATE ROLE reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader", database: name)
        let reader = try await BatchDatabase(
            url: "postgres://reader@127.0.0.1:\(server.port)/\(name)", opening: .existingBatch)
        return (PostgresStore(database: reader), reader, item)
    }

    /// A batch an older pipeline made has no table of attempts, and the reader may not add it: it still opens.
    @Test func aReaderOfABatchWithoutTheTableReadsNoAttempts() async throws {
        let server = try await PostgresServer.start()
        let (store, database, item) = try await batch(server, "older", setUp: "DROP TABLE stage_attempts")
        let history = try #require(try await store.history(of: item))
        #expect(history.versions.map(\.version) == [1] && history.attempts.isEmpty)
        await database.close()
    }

    /// The table was made after the reader's grant: the reader may not read it, and reads no attempts.
    @Test func aReaderWithoutSelectOnTheTableReadsNoAttempts() async throws {
        let server = try await PostgresServer.start()
        let (store, database, item) = try await batch(server, "later", setUp: "SELECT 1")
        _ = try await server.psql("REVOKE SELECT ON stage_attempts FROM reader", database: "later")
        let history = try #require(try await store.history(of: item))
        #expect(history.versions.map(\.version) == [1] && history.attempts.isEmpty)
        await database.close()
    }
}
