public import PipelineKit
import PostgresNIO

// Output claims (``OutputClaim``) in the batch's table `output_claims`: one row per file, of any workflow of the
// batch, going with its item (ON DELETE CASCADE). Claims are made when `submit` queues an item, so two submissions
// close together cannot both queue writers of one file.
extension PostgresStore {
    /// The table of output claims, added within schema 2 (a pipeline that does not know it ignores it), with the
    /// index that a forgotten item's claims are found by.
    static let outputClaimsTable = """
        DO $$ BEGIN
            IF to_regclass('output_claims') IS NULL THEN
                CREATE TABLE output_claims(
                    path text COLLATE "C" PRIMARY KEY, workflow text NOT NULL,
                    item bigint NOT NULL REFERENCES items(id) ON DELETE CASCADE, version integer NOT NULL);
                CREATE INDEX output_claims_by_item ON output_claims(item);
            END IF;
        END $$
        """

    /// An arbitrary key for the advisory lock that makes each claim a check and a write no other claim comes between.
    private static let claimLockKey: Int64 = 0x636c_6169_6d73

    public func outputClaims(paths: [String]) async throws(StateError) -> [String: OutputClaim] {
        guard !paths.isEmpty else { return [:] }
        var claims: [String: OutputClaim] = [:]
        for start in stride(from: 0, to: paths.count, by: 1_000) {
            let chunk = Array(paths[start..<min(start + 1_000, paths.count)])
            let rows = try await database.rows("read output claims", Self.claimsQuery(chunk))
            for claim in try database.decoding("read output claims", { try rows.map(Self.claim) }) {
                claims[claim.path] = claim
            }
        }
        return claims
    }

    public func claimOutputs(_ paths: [String], for item: ItemVersion, workflow: String) async throws(StateError)
        -> OutputClaim?
    {
        guard !paths.isEmpty else { return nil }
        let paths = Array(Set(paths)).sorted()
        let logger = database.logger
        return try await database.transaction("claim output files") { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.claimLockKey))", logger: logger)
            var claims: [OutputClaim] = []
            for try await row in try await connection.query(Self.claimsQuery(paths), logger: logger) {
                claims.append(try Self.claim(row))
            }
            if let taken = claims.first(where: { $0.item != item.item }) { return taken }
            try await connection.query(
                """
                INSERT INTO output_claims SELECT unnest(\(paths)), \(workflow), \(item.item), \(Int32(item.version))
                ON CONFLICT (path) DO UPDATE SET workflow = EXCLUDED.workflow, version = EXCLUDED.version
                """, logger: logger)
            return nil
        }
    }

    /// The claims on `paths`, with their items' input files.
    private static func claimsQuery(_ paths: [String]) -> PostgresQuery {
        """
        SELECT c.path, c.workflow, c.item, c.version, i.path FROM output_claims c JOIN items i ON i.id = c.item
        WHERE c.path = ANY(\(paths))
        """
    }

    private static func claim(_ row: PostgresRow) throws -> OutputClaim {
        let (path, workflow, item, version, input) = try row.decode((String, String, Int64, Int32, String).self)
        return OutputClaim(path: path, workflow: workflow, item: item, version: Int(version), input: input)
    }
}
