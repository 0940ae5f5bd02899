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
    let actions: ActionGuard

    /// Items a list answers with at most.
    static let maxItems = 500

    func register(on router: Router<BasicRequestContext>) {
        router.get("/") { request, _ in await page(request) }
        router.get("api/status") { request, _ in try await answering { try await status(request) } }
        router.get("api/items") { request, _ in try await answering { try await items(request) } }
        router.get("api/items/:id") { _, context in
            let id = try context.parameters.require("id", as: Int64.self)
            return try await answering { try await item(id) }
        }
        router.post("api/items/:id/retry") { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            return try await answering { try await act(request, on: id, retry: true) }
        }
        router.post("api/items/:id/cancel") { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            return try await answering { try await act(request, on: id, retry: false) }
        }
        router.post("login") { request, _ in try await login(request) }
    }

    // MARK: Reading

    /// The page carries the status it first draws, so the counts appear without waiting for a request of its own.
    /// When the status cannot be read, the page still loads (with none) and says why from its own request.
    private func page(_ request: Request) async -> Response {
        let status = (try? await statusDocument(request)) ?? .null
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: DashboardAssets.page(status: status))))
    }

    private func status(_ request: Request) async throws -> Response {
        Self.json(try await statusDocument(request))
    }

    private func statusDocument(_ request: Request) async throws -> JSONValue {
        let document = try await source.reading { ledger, queue in
            try await StatusDocument.read(
                ledger: ledger, queue: queue, source: source.location, readOnly: !actions.allowsActions)
        }
        guard case .object(var fields) = document else { return document }
        fields["signedIn"] = .bool(actions.refusal(of: request) == nil)
        return .object(fields)
    }

    private func items(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        let limit = min(Self.maxItems, query.get("limit", as: Int.self) ?? 100)
        var status: ItemStatus?
        if let name = query.get("status") {
            guard let named = StatusDocument.status(named: name) else {
                // Queued items of a shared batch and skipped files are counted, not listed.
                return Self.json(["items": []])
            }
            status = named
        }
        let only = query.get("workflow")
        let list = try await source.reading { ledger, _ -> [JSONValue] in
            guard let ledger else { return [] }
            var list: [JSONValue] = []
            let workflows = try await ledger.workflows().map(\.workflow)
            for workflow in workflows where only == nil || only == workflow {
                let items = try await ledger.items(workflow: workflow, status: status, limit: limit)
                // Failed and running items show their stages; a full list does not read every checkpoint.
                let withStages = status == .failed || status == .pending
                let checkpoints =
                    withStages ? try await ledger.checkpoints(workflow: workflow, items: Set(items.map(\.id))) : [:]
                list += items.map { item in
                    ItemDocument.summary(
                        item, workflow: workflow, stages: withStages ? checkpoints[item.id] ?? [:] : nil)
                }
            }
            return Array(list.prefix(limit))
        }
        return Self.json(["items": .array(list)])
    }

    private func item(_ id: Int64) async throws -> Response {
        let document = try await source.reading { ledger, _ -> JSONValue? in
            guard let ledger, let found = try await ledger.item(id) else { return nil }
            let (workflow, item) = found
            let stages = try await ledger.checkpoints(workflow: workflow, items: [id])[id] ?? [:]
            guard case .object(var fields) = ItemDocument.summary(item, workflow: workflow, stages: stages) else {
                return nil
            }
            fields["links"] = .array(ItemDocument.links(stages))
            return .object(fields)
        }
        guard let document else { return Self.error(.notFound, "no item \(id) in \(source.location)") }
        return Self.json(document)
    }

    /// Answers with the reason when the ledger or the database cannot be read or written: 503 while it cannot be
    /// reached or is busy (a database restarting, say: the page says so within its patience instead of a request
    /// hanging behind every refresh) or holds no batch any more (a `submit` makes one again), 500 when what it holds
    /// is damaged or of a newer format (trying again does not help).
    private func answering(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as StateError {
            let passing = error.code == .io || error.code == .busy || error.code == .missing
            return Self.error(passing ? .serviceUnavailable : .internalServerError, error.message)
        }
    }

    // MARK: Acting

    private func act(_ request: Request, on id: Int64, retry: Bool) async throws -> Response {
        if let refusal = actions.refusal(of: request) { return Self.error(refusal.status, refusal.message) }
        let found = try await source.reading { ledger, _ in try await ledger?.item(id) }
        guard let item = found?.item else { return Self.error(.notFound, "no item \(id) in \(source.location)") }
        switch (source, retry) {
        case (.sharedBatch(let database), true):
            guard try await BatchQueue(database: database).retryFailed(id) else {
                return Self.error(.conflict, "item \(id) is not a failed item of a submitted batch")
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
        case (.stateFolder(_, _, let requestCancel), false):
            guard item.status == .pending, try await requestCancel([id]) else {
                return Self.error(.conflict, "item \(id) is not running: cancel it with pipeline cancel WORKFLOW \(id)")
            }
        }
        return Self.json(["item": .int(Int(id)), "action": .string(retry ? "retry" : "cancel"), "accepted": true])
    }

    private func login(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: 4096)
        let form = String(buffer: body)
        let token = form.split(separator: "&").compactMap { pair -> String? in
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0] == "token" else { return nil }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }.first
        guard let token, actions.accepts(token), let cookie = actions.cookie else {
            return Response(status: .seeOther, headers: [.location: "/?login=failed"])
        }
        return Response(status: .seeOther, headers: [.location: "/", .setCookie: cookie])
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
}
