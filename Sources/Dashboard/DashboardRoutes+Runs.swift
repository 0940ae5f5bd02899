import Foundation
import Hummingbird
import PipelineKit
import SharedBatch
import StageKit

/// The run history (`GET /api/runs`) and the retry of failed items (`POST /api/items/retry`, and a state folder's
/// `POST /api/items/ID/retry`).
extension DashboardRoutes {
    /// The runs a page of the history holds when the request does not say, and the most it holds.
    static let (defaultRunLimit, maxRunLimit) = (20, 100)
    /// How many points the throughput chart has at most: a longer history is summed into buckets of minutes.
    static let chartBuckets = 120

    /// `GET /api/runs?limit&offset`: a page of the past runs (a shared batch: submissions), newest first, with how
    /// many there are, and the items done per minute over the page's span; 400 with the reason when a parameter is
    /// not understood.
    func runs(_ request: Request) async throws -> Response {
        let page: (limit: Int, offset: Int)
        switch Self.runPage(Self.parameters(of: request)) {
        case .success(let parsed): page = parsed
        case .failure(let error): return Self.error(.badRequest, error.message)
        }
        let document = try await source.reading { ledger, _ -> JSONValue in
            guard let ledger else { return ["runs": [], "total": 0, "offset": .int(page.offset), "throughput": .null] }
            let found = try await ledger.pastRuns(limit: page.limit, offset: page.offset)
            return [
                "runs": .array(found.runs.map(Self.document)), "total": .int(found.total), "offset": .int(page.offset),
                "throughput": try await Self.throughput(
                    ledger, over: found.runs, now: Date(), reachingNow: page.offset == 0),
            ]
        }
        return Self.json(document)
    }

    /// A request's query parameters by name.
    static func parameters(of request: Request) -> [String: String] {
        var parameters: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { parameters[String(key)] = String(value) }
        return parameters
    }

    /// The page of the history that `parameters` ask for: `limit` (1 to ``maxRunLimit``) and `offset`.
    static func runPage(_ parameters: [String: String]) -> Result<(limit: Int, offset: Int), ItemQueryError> {
        if let unknown = parameters.keys.sorted().first(where: { $0 != "limit" && $0 != "offset" }) {
            return .failure(ItemQueryError("the run history takes limit and offset, not \(unknown)"))
        }
        func count(_ key: String, _ range: ClosedRange<Int>, default value: Int) -> Result<Int, ItemQueryError> {
            guard let text = parameters[key], !text.isEmpty else { return .success(value) }
            guard let number = Int(text), range.contains(number) else {
                return .failure(
                    ItemQueryError(
                        "\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(text)"))
            }
            return .success(number)
        }
        return count("limit", 1...maxRunLimit, default: defaultRunLimit).flatMap { limit in
            count("offset", 0...Int(Int32.max), default: 0).map { (limit, $0) }
        }
    }

    /// A past run as the API gives it.
    static func document(_ run: PastRun) -> JSONValue {
        [
            "id": .int(Int(run.id)), "workflow": .string(run.workflow),
            "startedAt": .string(run.startedAt.formatted(.iso8601)),
            "finishedAt": run.finishedAt.map { .string($0.formatted(.iso8601)) } ?? .null,
            "seconds": run.finishedAt.map { .double(($0.timeIntervalSince(run.startedAt) * 10).rounded() / 10) }
                ?? .null,
            "outcome": .string(run.outcome.rawValue), "counts": .object(run.counts.mapValues { .int($0) }),
            "bytes": .int(Int(run.bytes)),
        ]
    }

    /// Where a run ends on the chart: when it finished; now while it runs; an interrupted one, which recorded no
    /// end, at its start.
    static func end(of run: PastRun, now: Date) -> Date {
        run.outcome == .running ? now : run.finishedAt ?? run.startedAt
    }

    /// The items of the runs' workflows done per minute from the first run's start to the last one's end
    /// (``end(of:now:)``), or with `reachingNow` (the newest page) to the last minute an item was done if later (a
    /// shared batch's workers finish after the submission), by the minute each item was last finished: `{"from",
    /// "to", "bucketMinutes", "points": [[start, items per minute], …]}`, one point per bucket of minutes, at most
    /// ``chartBuckets``; null without runs.
    static func throughput(_ ledger: any LedgerBrowsing, over runs: [PastRun], now: Date, reachingNow: Bool)
        async throws -> JSONValue
    {
        guard let from = runs.map(\.startedAt).min() else { return .null }
        let first = Int((from.timeIntervalSince1970 / 60).rounded(.down))
        // The ledger reads back from the newest minute done, which is no later than now.
        let back = min(Int(Int32.max), Int((now.timeIntervalSince(from) / 60).rounded(.up)) + 1)
        var doneIn: [Int: Int] = [:]
        for workflow in Set(runs.map(\.workflow)).sorted() {
            for (minute, count) in try await ledger.doneByMinute(workflow: workflow, minutes: back) {
                let index = Int((minute.timeIntervalSince1970 / 60).rounded(.down)) - first
                if index >= 0 { doneIn[index, default: 0] += count }
            }
        }
        var to = max(from.addingTimeInterval(60), runs.map { Self.end(of: $0, now: now) }.max() ?? now)
        if reachingNow, let last = doneIn.keys.max() {
            to = max(to, min(now, Date(timeIntervalSince1970: Double((first + last + 1) * 60))))
        }
        let minutes = Int((to.timeIntervalSince1970 / 60).rounded(.down)) - first + 1
        let bucket = max(1, (minutes + chartBuckets - 1) / chartBuckets)
        var done = [Int](repeating: 0, count: (minutes + bucket - 1) / bucket)
        for (index, count) in doneIn where index < minutes { done[index / bucket] += count }
        let points = done.enumerated().map { index, count -> JSONValue in
            let start = Date(timeIntervalSince1970: Double((first + index * bucket) * 60))
            return [
                .string(start.formatted(.iso8601)), .double((Double(count) / Double(bucket) * 100).rounded() / 100),
            ]
        }
        return [
            "from": .string(Date(timeIntervalSince1970: Double(first * 60)).formatted(.iso8601)),
            "to": .string(to.formatted(.iso8601)), "bucketMinutes": .int(bucket), "points": .array(points),
        ]
    }

    // MARK: Retrying failed items

    /// What a list of items offers this caller to do with all of its items: a list of failed items is retried as a
    /// whole (`POST /api/items/retry` with the list's filters).
    func listActions(_ query: ItemQuery, mayAct: Bool) -> [String] {
        guard mayAct, query.status == .failed else { return [] }
        return ["retry"]
    }

    /// `POST /api/items/retry?error&stage&workflow&q`: asks for every failed item the filters select to run again,
    /// as the retry of one item does; says how many failed and how many were asked for. A shared batch queues them
    /// (200); a state folder leaves them for its watch, or its next run (202, ``StateFolderRetry``).
    func retryAllFailed(_ request: Request) async throws -> Response {
        let query: ItemQuery
        switch Self.retryQuery(Self.parameters(of: request)) {
        case .success(let parsed): query = parsed
        case .failure(let error): return Self.error(.badRequest, error.message)
        }
        let failed = try await source.reading { ledger, _ in try await ledger?.items(matching: query).total ?? 0 }
        switch source {
        case .sharedBatch(let database):
            let queued = try await BatchQueue(database: database).retryFailed(matching: query)
            return Self.json(
                ["action": "retry", "failed": .int(failed), "queued": .int(queued.count), "accepted": true])
        case .stateFolder(_, _, _, let requestRetry, _):
            let retry = try await requestRetry(.failed(matching: query))
            return Self.json(
                [
                    "action": "retry", "failed": .int(failed), "queued": .int(retry.items.count), "accepted": true,
                    "outcome": .string(retry.outcome),
                ], status: .accepted)
        }
    }

    /// A state folder's item asked to run again: 202 with what happens to it (``StateFolderRetry``), 409 unless it
    /// has failed.
    func retryFailedItem(
        _ id: Int64, failed: Bool, through requestRetry: @Sendable (RetrySelection) async throws -> StateFolderRetry
    ) async throws -> Response {
        let refusal = Self.error(.conflict, "item \(id) has not failed: only a failed item is retried")
        guard failed else { return refusal }
        let retry = try await requestRetry(.items([id]))
        if retry.gone.contains(id) { return Self.error(.conflict, "item \(id)'s file is gone: no run takes it up") }
        // Taken up (or cancelled) since it was read: not failed any more.
        guard retry.items.contains(id) else { return refusal }
        return Self.json(
            [
                "item": .int(Int(id)), "action": "retry", "accepted": true, "outcome": .string(retry.outcome),
            ], status: .accepted)
    }

    /// The failed items a retry of all asks for: the filters of a list (`q`, `error`, `stage`, `workflow`, and
    /// `status` only as `failed`), counted, not paged.
    static func retryQuery(_ parameters: [String: String]) -> Result<ItemQuery, ItemQueryError> {
        let filters: Set = ["q", "error", "stage", "workflow", "status"]
        if let unknown = parameters.keys.sorted().first(where: { !filters.contains($0) }) {
            return .failure(
                ItemQueryError("a retry of failed items takes q, error, stage and workflow, not \(unknown)"))
        }
        if let status = parameters["status"], !status.isEmpty, status != ItemQuery.Status.failed.rawValue {
            return .failure(ItemQueryError("a retry takes failed items only, not status=\(status)"))
        }
        var given = parameters
        (given["status"], given["limit"]) = (ItemQuery.Status.failed.rawValue, "0")
        return Result { () throws(ItemQueryError) -> ItemQuery in try ItemQuery(parameters: given) }
    }
}
