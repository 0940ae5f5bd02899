public import PipelineKit
import PostgresNIO

extension BatchQueue {
    /// Claims the next queued item no live lease holds, for `lease`; nil when there is none. An item whose
    /// lease expired (its worker died or stalled) is taken over: ``Claim/takenOverFrom`` names that worker.
    /// Items the worker still runs and workflows it cannot run (by ``SubmittedWorkflow/key``) are left out. The claim
    /// gives up within the lease.
    ///
    /// The takeover limit (``TakeoverLimit``): `alone` says the worker runs nothing else now. Only then may it take
    /// a suspect item, and it takes one first; a worker running something takes only a dead worker's item while a
    /// suspect item it could run waits, so that it drains to nothing and takes that item next. `staysAlone` says it
    /// never runs more than one item; a claim that makes a counted takeover the `limit`-th is ``Claim/abandoned``.
    ///
    /// A lone claimer's first statement looks at suspect items only (``TakeoverLimit/suspectFirst``), then the
    /// ordinary claim runs: each walks its index in order of `id` and stops at the first free row.
    public func claim(
        for worker: String, lease: Duration, excludingItems items: [Int64] = [], workflows: [String] = [],
        alone: Bool = true, staysAlone: Bool = true, limit: Int = TakeoverLimit.defaultLimit
    ) async throws(StateError) -> Claim? {
        let claimer = Claimer(
            worker: worker, lease: lease, items: items, workflows: workflows, alone: alone, staysAlone: staysAlone)
        if alone, let claim = try await claim(claimer, among: TakeoverLimit.suspectFirst("items"), limit: limit) {
            return claim
        }
        return try await claim(claimer, among: "true", limit: limit)
    }

    /// Who claims, for what, as ``claim(for:lease:excludingItems:workflows:alone:staysAlone:limit:)`` says.
    private struct Claimer {
        let worker: String
        let lease: Duration
        let items: [Int64]
        let workflows: [String]
        let alone: Bool
        let staysAlone: Bool
    }

    /// One claim statement for `claimer`, among the rows of `items` that meet the condition `among` besides.
    private func claim(_ claimer: Claimer, among: String, limit: Int) async throws(StateError) -> Claim? {
        let (items, workflows) = (claimer.items, claimer.workflows)
        let rows = try await database.rows(
            "claim an item", patience: claimer.lease,
            """
            WITH next AS (
                SELECT id AS next_id, lease_owner AS previous_owner,
                    \(unescaped: TakeoverLimit.counted("items")) AS counted FROM items
                WHERE \(unescaped: Self.free("items")) AND \(unescaped: among)
                    AND \(unescaped: TakeoverLimit.claimable("items", alone: claimer.alone))
                    AND id <> ALL(\(items)) AND NOT EXISTS (SELECT 1 FROM workflows
                        WHERE workflows.id = items.queued_with AND workflows.key = ANY(\(workflows)))
                    AND (\(unescaped: TakeoverLimit.drainExempt("items", alone: claimer.alone))
                        OR NOT EXISTS (SELECT 1 FROM items AS waiting
                            WHERE waiting.suspect AND \(unescaped: Self.free("waiting")) AND waiting.id <> ALL(\(items))
                                AND NOT EXISTS (SELECT 1 FROM workflows
                                    WHERE workflows.id = waiting.queued_with AND workflows.key = ANY(\(workflows)))))
                ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
            UPDATE items SET lease_owner = \(claimer.worker), lease_generation = lease_generation + 1,
                lease_expires = now() + make_interval(secs => \(claimer.lease.inSeconds)),
                \(unescaped: TakeoverLimit.renewed),
                \(unescaped: TakeoverLimit.claimed("items", alone: claimer.alone, staysAlone: claimer.staysAlone))
            FROM next WHERE items.id = next.next_id
            RETURNING \(unescaped: PostgresStore.itemColumns), lease_generation,
                (SELECT key FROM workflows WHERE workflows.id = items.queued_with) AS workflow_key, queued_digest,
                previous_owner, takeovers, suspect, counted
            """)
        guard let row = rows.first else { return nil }
        return try database.decoding("claim an item") { try Claim(row, limit: limit) }
    }

    /// Ends the lone hold of a suspect item once it made progress (``TakeoverLimit``): its lease no longer counts as
    /// held alone, so the worker may claim more beside it. False while the item is still suspect (or the lease was
    /// lost).
    public func endLoneHold(of item: Int64, generation: Int64) async throws(StateError) -> Bool {
        let rows = try await database.rows(
            "end the lone hold of an item",
            """
            UPDATE items SET alone_generation = NULL
            WHERE id = \(item) AND lease_generation = \(generation) AND NOT suspect RETURNING id
            """)
        return !rows.isEmpty
    }

    /// The condition on the rows of `items` (by that name) that a claim may take: queued, no live lease, no cancel
    /// asked for.
    private static func free(_ items: String) -> String {
        """
        \(items).queued_with IS NOT NULL AND (\(items).lease_expires IS NULL OR \(items).lease_expires < now())
            AND NOT EXISTS (SELECT 1 FROM cancel_requests WHERE cancel_requests.item = \(items).id)
        """
    }
}
