import GRDB

// Output claims (``OutputClaim``) in the ledger's table `outputClaims`: one row per file, of any workflow of the
// state folder, going with its item (ON DELETE CASCADE).
extension SQLiteLedger {
    /// The table of output claims, added within schema 1 (a pipeline that does not know it ignores it), with the
    /// index that a forgotten item's claims are found by.
    static let outputClaimsTable = """
        CREATE TABLE IF NOT EXISTS outputClaims(
            path TEXT PRIMARY KEY, workflow TEXT NOT NULL,
            item INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE, version INTEGER NOT NULL) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS outputClaimsByItem ON outputClaims(item);
        """

    public func outputClaims(paths: [String]) async throws(StateError) -> [String: OutputClaim] {
        guard !paths.isEmpty else { return [:] }
        return try await read { db in
            // A ledger that no writer of this version has opened has no claims yet.
            guard try db.tableExists("outputClaims") else { return [:] }
            var claims: [String: OutputClaim] = [:]
            for start in stride(from: 0, to: paths.count, by: 500) {
                let chunk = Array(paths[start..<min(start + 500, paths.count)])
                for claim in try Self.claims(of: chunk, in: db) { claims[claim.path] = claim }
            }
            return claims
        }
    }

    public func claimOutputs(_ paths: [String], for item: ItemVersion, workflow: String) async throws(StateError)
        -> OutputClaim?
    {
        guard !paths.isEmpty else { return nil }
        return try await write(deferring: .outputClaims) { db in
            if let taken = try Self.claims(of: paths, in: db).first(where: { $0.item != item.item }) { return taken }
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO outputClaims VALUES (?, ?, ?, ?)
                    ON CONFLICT(path) DO UPDATE SET workflow = excluded.workflow, version = excluded.version
                    """)
            for path in paths { try statement.execute(arguments: [path, workflow, item.item, item.version]) }
            return nil
        }
    }

    /// The claims on `paths` (at most a few hundred: one statement), with their items' input files.
    private static func claims(of paths: [String], in db: Database) throws -> [OutputClaim] {
        let marks = Array(repeating: "?", count: paths.count).joined(separator: ", ")
        return try Row.fetchAll(
            db,
            sql: """
                SELECT c.path, c.workflow, c.item, c.version, i.path FROM outputClaims c JOIN items i ON i.id = c.item
                WHERE c.path IN (\(marks))
                """, arguments: StatementArguments(paths)
        ).map { row in
            OutputClaim(path: row[0], workflow: row[1], item: row[2], version: row[3], input: row[4])
        }
    }
}
