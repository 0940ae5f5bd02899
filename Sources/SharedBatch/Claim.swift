public import PipelineKit
import PostgresNIO

/// An item a worker claimed.
public struct Claim: Sendable {
    /// The item, as the ledger knows it.
    public var item: LedgerItem
    /// The lease's generation: the fencing token of the worker's writes.
    public var generation: Int64
    /// The stored workflow to run it with, by its ``SubmittedWorkflow/key``: what it is, unlike its number, which
    /// starts again at 1 in a database emptied for a new batch.
    public var workflow: String
    /// What the item is done with once it succeeds.
    public var digest: String
    /// The worker whose expired lease this claim took over, if any.
    public var takenOverFrom: String?
    /// Takeovers counted against the item since its last progress, this one included (``TakeoverLimit``).
    public var takeovers: Int
    /// Whether the item was taken over since its last progress: the worker runs it alone.
    public var suspect: Bool
    /// Whether this claim's takeover reached the limit: the item is failed, not run.
    public var abandoned: Bool

    /// The claim a row of ``BatchQueue/claim(for:lease:excludingItems:workflows:alone:staysAlone:limit:)`` returns: the item's columns and
    /// the claim's own, each read by its name; `limit` is the claimer's takeover limit.
    init(_ row: PostgresRow, limit: Int) throws {
        let columns = try NamedColumns(row)
        item = try PostgresStore.item(columns)
        generation = try columns["lease_generation"]
        workflow = try columns["workflow_key"]
        digest = try columns["queued_digest"] as String? ?? ""
        takenOverFrom = try columns["previous_owner"]
        takeovers = Int(try columns["takeovers"] as Int32)
        suspect = try columns["suspect"]
        let counted: Bool = try columns["counted"]
        abandoned = counted && takeovers >= limit
    }
}
