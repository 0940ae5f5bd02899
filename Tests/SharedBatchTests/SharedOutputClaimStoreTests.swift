import Foundation
import PipelineKit
import StageKit
import TestSupport
import Testing

@testable import SharedBatch

/// Output claims in a shared batch, against a real PostgreSQL: claims made at one moment through separate
/// connections (as by two submissions, or two workers starting a stage), and an item refused at `submit` leaving the
/// queue.
@Suite struct SharedOutputClaimStoreTests {
    /// Rounds of several items claiming one new file at once, through two stores on separate database connections
    /// (each with a pool of its own): in every round exactly one claim wins and holds the file.
    @Test func claimsOfOneFileAtOnceThroughSeparateConnectionsHaveOneWinner() async throws {
        let random = SeededRandom("claimsOfOneFileAtOnceThroughSeparateConnectionsHaveOneWinner")
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase()
        let (left, right) = (try await BatchDatabase(url: url), try await BatchDatabase(url: url))
        let stores = [PostgresStore(database: left), PostgresStore(database: right)]
        for round in 0..<12 {
            let claimers = random.int(in: 2...6)
            var refs: [ItemVersion] = []
            for index in 0..<claimers {
                refs.append(try await stores[0].admit(admission("r\(round)-\(index)"), workflow: "w").ref)
            }
            let path = "/out/round-\(round).mp4"
            let sides = refs.map { _ in random.int(in: 0...1) }
            let won = try await withThrowingTaskGroup(of: ItemVersion?.self) { group in
                for (ref, side) in zip(refs, sides) {
                    group.addTask {
                        try await stores[side].claimOutputs([path], for: ref, workflow: "w") == nil ? ref : nil
                    }
                }
                var won: [ItemVersion] = []
                for try await ref in group { if let ref { won.append(ref) } }
                return won
            }
            #expect(won.count == 1, "round \(round) (seed \(random.seed)): \(won.count) of \(claimers) claims won")
            let holder = try await stores[1].outputClaims(paths: [path])[path]?.item
            #expect(holder == won.first?.item, "round \(round) (seed \(random.seed))")
        }
        await left.close()
        await right.close()
        try await server.stop()
    }

    /// A new version of a queued item that `submit` records as failed (refused for another item's file, or damaged)
    /// leaves the queue: no worker takes it up.
    @Test func aNewVersionOfAQueuedItemFailedAtSubmitLeavesTheQueue() async throws {
        let (server, database, item) = try await PostgresStoreTests.queuedItem()
        let store = PostgresStore(database: database)
        let queue = BatchQueue(database: database)
        #expect(try await queue.queueState(of: [item]).queued == [item])
        let newer = try await store.admit(
            ItemAdmission(
                item: item, newVersion: true, fingerprint: "full:10:bb",
                input: InputItem(path: "/media/a.mp4", relativePath: "a.mp4", size: 10, modified: 1)),
            workflow: "w"
        ).ref
        let refused = ItemResult(
            ref: newer, fingerprint: "full:10:bb", path: "/media/a.mp4", outcome: .failed,
            reason: "/out/a.mp4 is also written by item 9", errorKind: .outputCollision, bytes: 10)
        try await store.finish(newer, result: refused, digest: nil)
        #expect(try await queue.queueState(of: [item]).queued.isEmpty)
        #expect(try await queue.claim(for: "worker", lease: .seconds(30)) == nil)
        await database.close()
        try await server.stop()
    }
}

private func admission(_ name: String) -> ItemAdmission {
    ItemAdmission(
        item: nil, newVersion: false, fingerprint: name,
        input: InputItem(path: "/m/\(name).mp4", relativePath: "\(name).mp4", size: 1, modified: 0))
}
