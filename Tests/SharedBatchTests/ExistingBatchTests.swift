import Foundation
import PipelineKit
import StageKit
import TestSupport
import Testing

@testable import SharedBatch

/// Opening a database for a command that reads a batch (``BatchDatabase/Opening/existingBatch``): a database without
/// a batch is refused and left as it was, one with a batch is read (and upgraded, as every command does), and one of a
/// newer pipeline is refused either way.
@Suite struct ExistingBatchTests {
    /// The tables in the database's `public` schema, by name.
    static func tables(_ server: PostgresServer, _ database: String) async throws -> [String] {
        let listed = try await server.psql(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename", database: database)
        return listed.split(separator: "\n").map(String.init)
    }

    @Test func aDatabaseWithoutABatchIsRefusedAndKeepsItsOwnTablesOnly() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase("someone_else")
        _ = try await server.psql("CREATE TABLE invoices(id integer)", database: "someone_else")
        let error = await #expect(throws: StateError.self) {
            _ = try await BatchDatabase(url: url, opening: .existingBatch)
        }
        #expect(error?.code == .missing)
        let message = error?.message ?? ""
        #expect(
            message.hasPrefix("no batch in the database postgres://pipeline@127.0.0.1:\(server.port)/someone_else: ")
                && message.contains("pipeline submit"), "\(message)")
        #expect(try await Self.tables(server, "someone_else") == ["invoices"])

        // A command that starts a batch still makes one there.
        let created = try await BatchDatabase(url: url, opening: .creatingBatch)
        await created.close()
        let read = try await BatchDatabase(url: url, opening: .existingBatch)
        await read.close()
        #expect(try await Self.tables(server, "someone_else").contains("pipeline_schema"))
    }

    /// A role that may only read the batch (a dashboard's) can open it: what the schema's additions would add is
    /// there, so nothing is created, and nothing waits for a lock on the items.
    @Test func aRoleThatMayOnlyReadOpensABatch() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase("readable")
        let created = try await BatchDatabase(url: url, opening: .creatingBatch)
        await created.close()
        _ = try await server.psql(
            "CREATE ROLE reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader", database: "readable")
        let reader = try await BatchDatabase(
            url: "postgres://reader@127.0.0.1:\(server.port)/readable", opening: .existingBatch)
        _ = try await BatchQueue(database: reader).status()
        await reader.close()
    }

    /// Webhook URLs recorded by an earlier pipeline in notification keys become their digests, computed by
    /// PostgreSQL as `WebhookName` computes them; a role that may only read the batch still opens it.
    @Test func notificationKeysNameWebhooksByDigest() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase("hooks")
        let created = try await BatchDatabase(url: url, opening: .creatingBatch)
        await created.close()
        let webhook = "https://discord.com/api/webhooks/1/SECRETPART"
        _ = try await server.psql(
            "INSERT INTO notifications(key) VALUES ('batchFinished 0a1b \(webhook)'), ('batchFinished 0a1b'); "
                + "CREATE ROLE reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader",
            database: "hooks")
        let reader = try await BatchDatabase(
            url: "postgres://reader@127.0.0.1:\(server.port)/hooks", opening: .existingBatch)
        await reader.close()
        let writer = try await BatchDatabase(url: url, opening: .existingBatch)
        await writer.close()
        let keys = try await server.psql("SELECT key FROM notifications ORDER BY key", database: "hooks")
        #expect(keys == "batchFinished 0a1b\nbatchFinished 0a1b \(WebhookName.of(webhook))", "\(keys)")
    }

    /// A batch made before the takeover limit's columns (main's schema), or by a build that lacked the last of them
    /// (`lease_renewed`), opens with the columns it lacks added, and its queued item is claimed.
    @Test(arguments: [["takeovers", "suspect", "alone_generation", "done_stages", "lease_renewed"], ["lease_renewed"]])
    func aBatchMadeBeforeTheTakeoverColumnsOpensAndItsItemsAreClaimed(lacking columns: [String]) async throws {
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase("older")
        let database = try await BatchDatabase(url: url)
        let admitted = try await PostgresStore(database: database).admit(
            ItemAdmission(
                item: nil, newVersion: false, fingerprint: "full:10:aa",
                input: InputItem(path: "/media/a.mp4", relativePath: "a.mp4", size: 10, modified: 0)),
            workflow: "w")
        let queue = BatchQueue(database: database)
        let workflow = try await queue.store(
            SubmittedWorkflow(
                name: "w", file: "/w.json", document: Data("{}".utf8), vars: [:], digest: "d", stages: ["s"]))
        try await queue.enqueue([admitted.ref.item: "d"], with: workflow)
        await database.close()
        let units = columns.map { $0 == "done_stages" ? "abandoned" : $0 }
        _ = try await server.psql(
            "ALTER TABLE items " + columns.map { "DROP COLUMN \($0)" }.joined(separator: ", ")
                + "; ALTER TABLE segment_units " + units.map { "DROP COLUMN \($0)" }.joined(separator: ", "),
            database: "older")

        let reopened = try await BatchDatabase(url: url, opening: .existingBatch)
        let claim = try #require(try await BatchQueue(database: reopened).claim(for: "w1", lease: .seconds(60)))
        #expect(claim.item.id == admitted.ref.item && claim.takeovers == 0 && !claim.suspect)
        await reopened.close()
        let index = try await server.psql("SELECT to_regclass('items_suspect') IS NOT NULL", database: "older")
        #expect(index == "t", "the index of suspect items was not made again")
    }

    @Test func aBatchOfANewerPipelineIsRefusedByEveryOpening() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase("newer")
        let database = try await BatchDatabase(url: url)
        await database.close()
        // A newer schema without a table this one adds: refusing it must leave it so.
        _ = try await server.psql(
            "UPDATE pipeline_schema SET version = \(BatchSchema.version + 1); DROP TABLE notifications",
            database: "newer")
        for opening in [BatchDatabase.Opening.existingBatch, .creatingBatch] {
            let error = await #expect(throws: StateError.self) {
                _ = try await BatchDatabase(url: url, opening: opening)
            }
            #expect(error?.code == .incompatible, "\(opening)")
            #expect(error?.message.contains("newer than this pipeline reads") == true, "\(String(describing: error))")
        }
        let left = try await server.psql("SELECT to_regclass('notifications') IS NULL", database: "newer")
        #expect(left == "t", "the refused batch was changed: \(left)")
    }

    /// The batch's tables dropped under an open database (the database emptied for a new start): its reads say
    /// that there is no batch any more, as a command that opens it then would, rather than quoting a missing table
    /// as a failure of the database.
    @Test func tablesDroppedUnderAnOpenDatabaseReadAsNoBatch() async throws {
        let server = try await PostgresServer.start()
        let url = try await server.createDatabase("emptied")
        let database = try await BatchDatabase(url: url, patience: .seconds(3))
        _ = try await BatchQueue(database: database).status()
        _ = try await server.psql("DROP SCHEMA public CASCADE; CREATE SCHEMA public", database: "emptied")
        let error = await #expect(throws: StateError.self) {
            _ = try await BatchQueue(database: database).status()
        }
        #expect(error?.code == .missing)
        #expect(error?.message.contains("no batch in the database") == true, "\(String(describing: error))")
        await database.close()
    }
}
