import Foundation
import PipelineKit
import PostgresNIO
import TestSupport
import Testing

@testable import SharedBatch

/// Rows that share a column list with other queries are read by column name: the list can gain a column, or
/// change its order, without shifting what the rest of a row means.
@Suite struct RowDecodingTests {
    /// A claim's row read with its item columns in another order and a column the list does not have today among
    /// them (as when `itemColumns` gains one) is the claim the queue made: nothing a claim reads moves with the list.
    @Test func aClaimReadsTheSameWhenTheItemColumnsChange() async throws {
        let (server, database, item) = try await PostgresStoreTests.queuedItem()
        let claim = try #require(try await BatchQueue(database: database).claim(for: "worker", lease: .seconds(30)))
        var columns = PostgresStore.itemColumns.split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        columns.reverse()
        columns.insert("queued_at", at: columns.count / 2)
        let rows = try await database.rows(
            "read the claim's columns",
            """
            SELECT lease_generation, \(unescaped: columns.joined(separator: ", ")),
                (SELECT key FROM workflows WHERE workflows.id = items.queued_with) AS workflow_key, queued_digest,
                'earlier' AS previous_owner, takeovers, suspect, false AS counted
            FROM items WHERE id = \(item)
            """)
        let read = try Claim(try #require(rows.first), limit: 3)
        #expect(read.item == claim.item)
        #expect(read.generation == claim.generation && read.generation == 1)
        #expect(read.workflow == claim.workflow && read.digest == claim.digest && read.digest == "d")
        #expect(read.takenOverFrom == "earlier")
        await database.close()
        try await server.stop()
    }

    /// A row that lacks a column its reader needs, or that has two of one name (a column added to a shared list
    /// under a name the query already uses), is refused with what is wrong, never read from the wrong column.
    @Test func aRowWithoutItsColumnsOrWithTwoOfOneNameIsRefused() async throws {
        let server = try await PostgresServer.start()
        let database = try await BatchDatabase(url: try await server.createDatabase())
        let missing = try await database.rows("read a short row", "SELECT 1::bigint AS lease_generation")
        let short = try #require(missing.first)
        let missingError = #expect(throws: RowShapeError.self) { try Claim(short, limit: 3) }
        #expect(missingError?.message == "the row has no column id")
        let doubled = try #require(
            try await database.rows("read a doubled row", "SELECT 1 AS seconds, 2 AS seconds").first)
        let doubledError = #expect(throws: RowShapeError.self) { try NamedColumns(doubled) }
        #expect(doubledError?.message == "the row has two columns named seconds")
        await database.close()
        try await server.stop()
    }

    /// The rows of one result are read by name with the result's names checked once: every row reads its own
    /// values, a result with two columns of one name is refused however many rows it has, and a result without
    /// rows reads as none.
    @Test func theRowsOfAResultAreReadByNameAndTheirNamesChecked() async throws {
        let server = try await PostgresServer.start()
        let database = try await BatchDatabase(url: try await server.createDatabase())
        let rows = try await database.rows(
            "read rows", "SELECT n AS number, n * 2 AS twice FROM generate_series(1, 3) AS n")
        let read = try NamedColumns.rows(of: rows).map { columns in
            (number: try columns["number"] as Int32, twice: try columns["twice"] as Int32)
        }
        #expect(read.map(\.number) == [1, 2, 3] && read.map(\.twice) == [2, 4, 6])
        let doubled = try await database.rows(
            "read doubled rows", "SELECT n AS seconds, n AS seconds FROM generate_series(1, 3) AS n")
        let doubledError = #expect(throws: RowShapeError.self) { try NamedColumns.rows(of: doubled) }
        #expect(doubledError?.message == "the row has two columns named seconds")
        let none = try await database.rows("read no rows", "SELECT 1 AS seconds WHERE false")
        #expect(try NamedColumns.rows(of: none).isEmpty)
        await database.close()
        try await server.stop()
    }
}
