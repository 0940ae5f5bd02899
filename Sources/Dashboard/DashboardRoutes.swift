import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PipelineKit
import SharedBatch
import StageKit

/// The dashboard's routes: the page and its assets, the JSON API the page reads, and the guarded actions.
struct DashboardRoutes: Sendable {
    let source: DashboardSource
    let access: AccessGuard
    /// How often the status streams' feed reads, how long a stream lasts, and how many there may be.
    let streamTiming: StatusStream.Timing
    /// The status read once a second for all open streams.
    let feed: StatusFeed

    init(source: DashboardSource, access: AccessGuard, streamTiming: StatusStream.Timing = StatusStream.Timing()) {
        self.source = source
        self.access = access
        self.streamTiming = streamTiming
        feed = StatusFeed(interval: streamTiming.interval, limit: streamTiming.limit) {
            await Self.feedReading(source: source, access: access)
        }
    }

    /// Items a list answers with at most.
    static let maxItems = 500

    func register(on router: Router<DashboardContext>) {
        router.get("/") { request, context in await page(request, context) }
        router.get("api/status") { request, context in
            try await reading(request, context) { try await status(request, context) }
        }
        router.get("api/events") { request, context in
            try await reading(request, context) { await events(request, context) }
        }
        router.get("api/items") { request, context in
            try await reading(request, context) { try await items(request) }
        }
        router.get("api/items/:id") { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            return try await reading(request, context) { try await item(id, request, context) }
        }
        router.post("api/items/:id/retry") { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            return try await acting(request, context) { try await act(on: id, retry: true) }
        }
        router.post("api/items/:id/cancel") { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            return try await acting(request, context) { try await act(on: id, retry: false) }
        }
        router.post("api/workers/prune") { request, context in
            try await acting(request, context) { try await pruneWorkers() }
        }
        router.post("login") { request, context in try await login(request, context) }
        router.post("logout") { request, _ in logout(request) }
    }

    // MARK: Reading

    /// The page carries the status it first draws, so the counts appear without waiting for a request of its own.
    /// When the status cannot be read, the page still loads (with none) and says why from its own request; when
    /// reads need the token and the browser has not signed in, it carries nothing but the sign-in form.
    private func page(_ request: Request, _ context: DashboardContext) async -> Response {
        let caller = try? access.caller(of: request, from: context.client).get()
        let mayRead = access.readRefusal(of: request, from: context.client) == nil
        let status = mayRead ? (try? await statusDocument(caller: caller)) ?? .null : .null
        var csrf: String?
        if case .session(_, let session) = caller { csrf = session.csrf }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                .contentSecurityPolicy: DashboardAssets.contentSecurityPolicy,
                .xFrameOptions: "DENY", .referrerPolicy: "no-referrer",
            ],
            body: ResponseBody(
                byteBuffer: ByteBuffer(string: DashboardAssets.page(status: status, csrf: csrf, mayRead: mayRead))))
    }

    private func items(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        let limit = max(0, min(Self.maxItems, query.get("limit", as: Int.self) ?? 100))
        let offset = max(0, query.get("offset", as: Int.self) ?? 0)
        var status: ItemStatus?
        if case .sharedBatch = source, let name = query.get("status"), name == "running" || name == "queued" {
            // The ledger holds a shared batch's queued items as pending: only the queue tells running from waiting.
            return try await queuedItems(
                name == "running" ? .running : .waiting, workflow: query.get("workflow"), limit: limit, offset: offset)
        }
        if let name = query.get("status") {
            guard let named = StatusDocument.status(named: name) else {
                // Queued items of a shared batch and skipped files are counted, not listed.
                return Self.json(["items": [], "total": 0, "offset": .int(offset)])
            }
            status = named
        }
        let only = query.get("workflow")
        let page = try await source.reading { ledger, queue -> ItemPage in
            guard let ledger else { return ItemPage(items: [], total: 0) }
            return try await Self.page(
                of: ledger, queue: queue, status: status, workflow: only, limit: limit, offset: offset)
        }
        return Self.json(["items": .array(page.items), "total": .int(page.total), "offset": .int(offset)])
    }

    /// A page of a ledger's items, `status` ones or all, of the workflow `only` names or all, with how many there are.
    private static func page(
        of ledger: any LedgerBrowsing, queue: BatchQueue?, status: ItemStatus?, workflow only: String?, limit: Int,
        offset: Int
    ) async throws -> ItemPage {
        let workflows = try await ledger.workflows().filter { only == nil || only == $0.workflow }
        let counts = try await ledger.statusCounts()
        let total = workflows.reduce(0) { sum, run in
            let tallies = counts[run.workflow] ?? [:]
            return sum + (status.map { tallies[$0]?.count ?? 0 } ?? tallies.values.reduce(0) { $0 + $1.count })
        }
        // A page past the end is empty, read or not (and `offset + limit` below stays within the list's size).
        guard offset < total else { return ItemPage(items: [], total: total) }
        // One workflow's page is read as a page; several workflows' pages are merged from the start of each.
        let single = workflows.count == 1
        var found: [(workflow: RunRecord, item: LedgerItem)] = []
        for workflow in workflows {
            let items = try await ledger.items(
                workflow: workflow.workflow, status: status, limit: single ? limit : offset + limit,
                offset: single ? offset : 0)
            found += items.map { (workflow, $0) }
        }
        if !single {
            // The stores' order: the newest first, the larger number first among items updated at once.
            found.sort { ($0.item.updatedAt, $0.item.id) > ($1.item.updatedAt, $1.item.id) }
            found = Array(found.dropFirst(offset).prefix(limit))
        }
        // Failed and running items show their stages; a full list does not read every checkpoint.
        let withStages = status == .failed || status == .pending
        var checkpoints: [Int64: [String: StageRecord]] = [:]
        if withStages {
            for workflow in workflows {
                let ids = Set(found.filter { $0.workflow.workflow == workflow.workflow }.map(\.item.id))
                guard !ids.isEmpty else { continue }
                checkpoints.merge(try await ledger.checkpoints(workflow: workflow.workflow, items: ids)) { $1 }
            }
        }
        let place = try await queue?.queueState(of: found.map(\.item.id))
        let list = found.map { workflow, item in
            ItemDocument.placed(
                ItemDocument.summary(
                    item, workflow: workflow.workflow, stages: withStages ? checkpoints[item.id] ?? [:] : nil,
                    order: workflow.stages),
                id: item.id, in: place)
        }
        return ItemPage(items: list, total: total)
    }

    /// A shared batch's running items (held by a live lease) or waiting ones (queued, held by none), a page of them
    /// with how many there are in all, as the status counts them.
    private func queuedItems(_ place: BatchQueue.QueuePlace, workflow only: String?, limit: Int, offset: Int)
        async throws -> Response
    {
        let page = try await source.reading { ledger, queue -> ItemPage in
            guard let ledger, let queue else { return ItemPage(items: [], total: 0) }
            let found = try await queue.items(place, workflow: only, limit: limit, offset: offset)
            let batch = try await queue.status(listingFailed: false)
            let total = batch.workflows.filter { only == nil || only == $0.key }.values.reduce(0) {
                $0 + (place == .running ? $1.running : $1.queued)
            }
            let runs = Dictionary(
                try await ledger.workflows().map { ($0.workflow, $0.stages) }, uniquingKeysWith: { $1 })
            // Running items show their stages (a handful); waiting ones have not started any.
            let running = place == .running
            var list: [JSONValue] = []
            for (workflow, item) in found {
                let stages = running ? try await ledger.checkpoints(workflow: workflow, items: [item.id])[item.id] : nil
                let document = ItemDocument.summary(
                    item, workflow: workflow, stages: running ? stages ?? [:] : nil, order: runs[workflow] ?? [])
                list.append(
                    ItemDocument.placed(document, id: item.id, in: ([item.id], running ? [item.id] : [])))
            }
            return ItemPage(items: list, total: total)
        }
        return Self.json(["items": .array(page.items), "total": .int(page.total), "offset": .int(offset)])
    }

    /// A page of a list of items, and how many items the whole list has.
    private struct ItemPage: Sendable {
        var items: [JSONValue]
        var total: Int
    }

    private func item(_ id: Int64, _ request: Request, _ context: DashboardContext) async throws -> Response {
        let mayAct = signedInToAct(request, context)
        let document = try await source.reading { ledger, queue -> JSONValue? in
            guard let ledger, let found = try await ledger.item(id) else { return nil }
            let place = try await queue?.queueState(of: [id])
            let (workflow, item) = found
            let stages = try await ledger.checkpoints(workflow: workflow, items: [id])[id] ?? [:]
            let order = try await ledger.workflows().first { $0.workflow == workflow }?.stages ?? []
            guard
                case .object(var fields) = ItemDocument.summary(
                    item, workflow: workflow, stages: stages, order: order)
            else {
                return nil
            }
            fields["links"] = .array(ItemDocument.links(stages))
            let placed = ItemDocument.placed(.object(fields), id: id, in: place)
            guard case .object(var shown) = placed else { return placed }
            shown["actions"] = .array(mayAct ? actions(on: shown["status"]?.stringValue).map(JSONValue.string) : [])
            return .object(shown)
        }
        guard let document else { return Self.error(.notFound, "no item \(id) in \(source.location)") }
        return Self.json(document)
    }

    /// Whether the request comes from someone who may act: a server that takes actions, and the bearer token or a
    /// signed-in session (the page sends its CSRF token with the action itself, not with its reads).
    private func signedInToAct(_ request: Request, _ context: DashboardContext) -> Bool {
        guard access.allowsActions, case .success(let caller) = access.caller(of: request, from: context.client) else {
            return false
        }
        if case .anonymous = caller { return false }
        return true
    }

    /// The actions the source takes on an item shown with `status`: a shared batch retries a failed item (a state
    /// folder's run again with `pipeline run --failed`), and a running item can be cancelled.
    private func actions(on status: String?) -> [String] {
        switch (source, status) {
        case (.sharedBatch, "failed"): ["retry"]
        case (_, "running"): ["cancel"]
        default: []
        }
    }

    /// Answers a read: refused when reads need the token and the request has none, else `body`'s answer.
    private func reading(_ request: Request, _ context: DashboardContext, _ body: () async throws -> Response)
        async throws -> Response
    {
        if let refusal = access.readRefusal(of: request, from: context.client) { return Self.refused(refusal) }
        return try await answering(body)
    }

    /// Answers an action: refused unless a signed-in request from the dashboard's own origin asks for it.
    private func acting(_ request: Request, _ context: DashboardContext, _ body: () async throws -> Response)
        async throws -> Response
    {
        if let refusal = access.actionRefusal(of: request, from: context.client) { return Self.refused(refusal) }
        return try await answering(body)
    }

    /// Answers with the reason when the ledger or the database cannot be read or written: 503 while it cannot be
    /// reached or is busy (a database restarting, say: the page says so within its patience instead of a request
    /// hanging behind every refresh) or holds no batch any more (a `submit` makes one again), 500 when what it holds
    /// is damaged or of a newer format (trying again does not help).
    private func answering(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as StateError {
            let failure = Self.readFailure(error)
            return Self.error(failure.status, failure.message)
        }
    }

    /// What a failure to read or write the ledger or the database is answered with (and said as on the page).
    static func readFailure(_ error: StateError) -> (status: HTTPResponse.Status, message: String) {
        let passing = error.code == .io || error.code == .busy || error.code == .missing
        return (passing ? .serviceUnavailable : .internalServerError, error.message)
    }

    // MARK: Acting

    private func act(on id: Int64, retry: Bool) async throws -> Response {
        let found = try await source.reading { ledger, _ in try await ledger?.item(id) }
        guard let item = found?.item else { return Self.error(.notFound, "no item \(id) in \(source.location)") }
        switch (source, retry) {
        case (.sharedBatch(let database), true):
            let queue = BatchQueue(database: database)
            // Retrying an item already queued again (a second click, another page) asks for what is under way.
            let retried = try await queue.retryFailed(id)
            let queued = retried ? [] : try await queue.queueState(of: [id]).queued
            guard retried || (item.status == .failed && queued.contains(id)) else {
                guard item.status == .failed else {
                    return Self.error(.conflict, "item \(id) is not a failed item of a submitted batch")
                }
                // Refused by submit (its file is another item's output, or it is damaged): it was never queued, so
                // only a new submit, once the cause is gone, can queue it.
                let kind = item.error.map { " (\($0.kind.rawValue))" } ?? ""
                return Self.error(
                    .conflict,
                    "item \(id) failed when it was submitted\(kind), so it was never queued: once the cause is gone, "
                        + "queue it with pipeline submit WORKFLOW --failed --db URL")
            }
        case (.stateFolder, true):
            return Self.error(
                .conflict,
                "a state folder's failed items run again with pipeline run WORKFLOW --failed; a dashboard cannot start a run"
            )
        case (.sharedBatch(let database), false):
            guard item.status == .pending else {
                return Self.error(
                    .conflict, "item \(id) is not running: cancel it with pipeline cancel WORKFLOW \(id) --db URL")
            }
            try await PostgresStore(database: database).requestCancel(of: [id])
        case (.stateFolder(_, _, let requestCancel, _), false):
            guard item.status == .pending, try await requestCancel([id]) else {
                return Self.error(.conflict, "item \(id) is not running: cancel it with pipeline cancel WORKFLOW \(id)")
            }
        }
        return Self.json(["item": .int(Int(id)), "action": .string(retry ? "retry" : "cancel"), "accepted": true])
    }

    /// Forgets a shared batch's stopped workers, so that the list shows the workers there are.
    private func pruneWorkers() async throws -> Response {
        guard case .sharedBatch(let database) = source else {
            return Self.error(.conflict, "a state folder has no workers: its runs are not listed as workers")
        }
        let pruned = try await BatchQueue(database: database).pruneStoppedWorkers()
        return Self.json(["action": "prune", "pruned": .int(pruned), "accepted": true])
    }

    /// Signs a browser in: the token from the form (`token=…`, form-encoded, or `{"token": …}`), from the
    /// dashboard's own page only, at the pace ``LoginThrottle`` allows. Opens a session whose cookie the answer sets.
    private func login(_ request: Request, _ context: DashboardContext) async throws -> Response {
        guard let token = access.access.token else { return Self.refused(.readOnly) }
        if let foreign = AccessGuard.foreignOrigin(of: request) { return Self.refused(.crossSite(foreign)) }
        if let wait = access.throttle.wait(for: context.client) { return Self.refused(.throttled(wait)) }
        let body = String(buffer: try await request.body.collect(upTo: 4096))
        guard let given = Self.token(inSignIn: body), secretsMatch(given, token) else {
            access.throttle.failed(context.client)
            return Self.refused(.wrongToken)
        }
        access.throttle.succeeded(context.client)
        let (id, _) = access.sessions.open()
        var response = Self.json(["signedIn": true])
        response.headers[.setCookie] = AccessGuard.cookie(for: id)
        return response
    }

    /// Signs a browser out: its session is closed, so its cookie opens nothing any more, and the cookie is cleared.
    private func logout(_ request: Request) -> Response {
        if let foreign = AccessGuard.foreignOrigin(of: request) { return Self.refused(.crossSite(foreign)) }
        if let id = request.cookies[AccessGuard.cookieName]?.value { access.sessions.close(id) }
        var response = Self.json(["signedIn": false])
        response.headers[.setCookie] = AccessGuard.clearedCookie
        return response
    }

    /// The token a sign-in's body gives: a JSON object's `token`, or a form's `token=…`.
    static func token(inSignIn body: String) -> String? {
        if let json = try? JSONValue(parsing: body), case .object = json { return json["token"]?.stringValue }
        return body.split(separator: "&").compactMap { pair -> String? in
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0] == "token" else { return nil }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }.first
    }

    // MARK: Responses

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: value.serialized())))
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        json(["error": .string(message)], status: status)
    }

    /// A refusal's answer, with `Retry-After` when the client has to wait.
    static func refused(_ refusal: AccessRefusal) -> Response {
        var response = error(refusal.status, refusal.message)
        if let seconds = refusal.retryAfter { response.headers[.retryAfter] = String(seconds) }
        return response
    }
}
