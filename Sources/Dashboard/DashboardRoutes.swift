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

    func register(on router: Router<DashboardContext>) {
        router.get("/") { request, context in await page(request, context) }
        router.get("api/status") { request, context in
            try await reading(request, context) { try await status(request, context) }
        }
        router.get("api/events") { request, context in
            try await reading(request, context) { await events(request, context) }
        }
        router.get("api/items") { request, context in
            try await reading(request, context) { try await items(request, context) }
        }
        router.get("api/runs") { request, context in
            try await reading(request, context) { try await runs(request) }
        }
        router.post("api/items/retry") { request, context in
            try await acting(request, context) { try await retryAllFailed(request) }
        }
        router.get("api/filters") { request, context in
            try await reading(request, context) { try await filters() }
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
        registerWorkerRequests(on: router)
        router.post("login") { request, context in try await login(request, context) }
        router.post("logout") { request, _ in logout(request) }
        registerHistory(on: router)
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

    /// A page of the items the request's parameters ask for (``ItemQuery``), with how many match in all; 400 with the
    /// reason when a parameter is not understood.
    private func items(_ request: Request, _ context: DashboardContext) async throws -> Response {
        let query: ItemQuery
        switch Self.itemQuery(request, source: source) {
        case .success(let parsed): query = parsed
        case .failure(let error): return Self.error(.badRequest, error.message)
        }
        let page = try await source.reading { ledger, queue -> ItemPage in
            guard let ledger else { return ItemPage(items: [], total: 0) }
            let found = try await ledger.items(matching: query)
            let order = Dictionary(
                try await ledger.workflows().map { ($0.workflow, $0.stages) }, uniquingKeysWith: { $1 })
            // The page's items show their stages: a page holds at most a few hundred, read by their keys.
            var checkpoints: [Int64: [String: StageRecord]] = [:]
            for workflow in Set(found.items.map(\.workflow)) {
                let ids = Set(found.items.filter { $0.workflow == workflow }.map(\.item.id))
                checkpoints.merge(try await ledger.checkpoints(workflow: workflow, items: ids)) { $1 }
            }
            let place = try await queue?.queueState(of: found.items.map(\.item.id))
            let list = found.items.map { workflow, item in
                ItemDocument.placed(
                    ItemDocument.summary(
                        item, workflow: workflow, stages: checkpoints[item.id] ?? [:], order: order[workflow] ?? []),
                    id: item.id, in: place)
            }
            return ItemPage(items: list, total: found.total)
        }
        return Self.json([
            "items": .array(page.items), "total": .int(page.total), "offset": .int(query.offset),
            "actions": .array(listActions(query, mayAct: signedInToAct(request, context)).map(JSONValue.string)),
        ])
    }

    /// The list a request asks for, from its query's parameters; a worker only of a shared batch.
    static func itemQuery(_ request: Request, source: DashboardSource) -> Result<ItemQuery, ItemQueryError> {
        var parameters: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { parameters[String(key)] = String(value) }
        let parsed = Result { () throws(ItemQueryError) -> ItemQuery in try ItemQuery(parameters: parameters) }
        return parsed.flatMap { query in
            if case .stateFolder = source, let worker = query.worker {
                return .failure(
                    ItemQueryError("a state folder has no workers: worker=\(worker) filters a shared batch's items"))
            }
            return .success(query)
        }
    }

    /// What a list can be filtered by: the statuses, and the error kinds, stages and workflows the ledger holds (the
    /// stages in their workflows' order).
    private func filters() async throws -> Response {
        let document = try await source.reading { ledger, _ -> JSONValue in
            let runs = try await ledger?.workflows() ?? []
            var stages: [String] = []
            for run in runs { stages += run.stages.filter { !stages.contains($0) } }
            return [
                "statuses": .array(ItemQuery.Status.allCases.map { .string($0.rawValue) }),
                "errorKinds": .array(try await ledger?.errorKinds().map(JSONValue.string) ?? []),
                "stages": .array(stages.map(JSONValue.string)),
                "workflows": .array(runs.map { .string($0.workflow) }),
            ]
        }
        return Self.json(document)
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
            fields["takeovers"] = try await queue?.takeovers(of: id).map(JSONValue.int) ?? .null
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

    /// The actions the source takes on an item shown with `status`: a failed item is retried (a shared batch queues
    /// it again, a state folder's runs again under its watch or at its next run), and a running item can be
    /// cancelled.
    private func actions(on status: String?) -> [String] {
        switch status {
        case "failed": ["retry"]
        case "running": ["cancel"]
        default: []
        }
    }

    /// Answers a read: refused when reads need the token and the request has none, else `body`'s answer.
    func reading(_ request: Request, _ context: DashboardContext, _ body: () async throws -> Response)
        async throws -> Response
    {
        if let refusal = access.readRefusal(of: request, from: context.client) { return Self.refused(refusal) }
        return try await answering(body)
    }

    /// Answers an action: refused unless a signed-in request from the dashboard's own origin asks for it.
    func acting(_ request: Request, _ context: DashboardContext, _ body: () async throws -> Response)
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
        case (.stateFolder(_, _, _, let requestRetry, _), true):
            return try await retryFailedItem(id, failed: item.status == .failed, through: requestRetry)
        case (.sharedBatch(let database), false):
            guard item.status == .pending else {
                return Self.error(
                    .conflict, "item \(id) is not running: cancel it with pipeline cancel WORKFLOW \(id) --db URL")
            }
            try await PostgresStore(database: database).requestCancel(of: [id])
        case (.stateFolder(_, _, let requestCancel, _, _), false):
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
