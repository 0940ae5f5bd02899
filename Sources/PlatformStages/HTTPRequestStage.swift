import AsyncHTTPClient
import Foundation
import HTTPTransport
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
public import StageKit

/// `http.request`: any REST call, so a workflow can create, activate and describe uploads on a platform
/// that has no stage of its own. The body is a JSON template; outputs are picked from the answer with
/// JSON pointers (`/upload/link`) or headers (`header:Location`), and declared by the workflow. With
/// `reconcile`, a create that was never answered (a crash, a lost connection) is looked up in a listing
/// before it is sent again, so an API without idempotency keys still gets one object.
public struct HTTPRequestStage: Stage {
    /// The options of `http.request`.
    public struct Options: StageOptions {
        /// The method.
        @Option("The method.") public var method = Method.GET
        /// The URL.
        @Option("The URL.") public var url: String
        /// Request headers (e.g. Authorization: Bearer ${env.TOKEN}).
        @Option("Request headers (e.g. Authorization: Bearer ${env.TOKEN}).") public var headers: [String: String] = [:]
        /// A JSON body (templated); sets Content-Type: application/json.
        @Option("A JSON body (templated); sets Content-Type: application/json.") public var json: JSONValue?
        /// A text body, when not JSON.
        @Option("A text body, when not JSON.") public var body: String?
        /// Statuses that count as success (default: any 2xx).
        @Option("Statuses that count as success (default: any 2xx).", minimumCount: 1) public var expect: [Int]?
        /// Output name → JSON pointer into the answer ("/id") or "header:Name".
        @Option("Output name → JSON pointer into the answer (\"/id\") or \"header:Name\".")
        public var outputs: [String: String] = [:]
        /// Send an Idempotency-Key kept across retries and reruns, so a repeated POST does not act twice.
        @Option("Send an Idempotency-Key kept across retries and reruns, so a repeated POST does not act twice.")
        public var idempotent = false
        /// The longest wait for the answer.
        @Option("The longest wait for the answer.", exclusiveMinimum: 0) public var timeout = TimeSpan(seconds: 60)
        /// How to find what an earlier, unanswered attempt created, before sending the request again.
        @Option("How to find what an earlier, unanswered attempt created, before sending the request again.")
        public var reconcile: Reconcile?

        public init() {}
    }

    /// `reconcile`: a listing and a match that find the object an unanswered request created.
    public struct Reconcile: NestedOptions {
        /// A GET that lists the objects the request creates; it gets the request's headers.
        @Option(
            "A GET that lists the objects the request creates (newest first, filtered); it gets the request's headers.")
        public var url: String
        /// JSON pointer → value: every pair must match the object (e.g. {"/name": "${input.stem}"}).
        @Option("JSON pointer → value: every pair must match the object (e.g. {\"/name\": \"${input.stem}\"}).")
        public var match: [String: JSONValue]
        /// Where the objects are in the listing (a JSON pointer; default: the answer if it is an array, else /data).
        @Option(
            "Where the objects are in the listing (a JSON pointer; default: the answer if it is an array, else /data).")
        public var items: String?
        /// How long to look (listings lag behind creation) before sending the request again.
        @Option("How long to look (listings lag behind creation) before sending the request again.")
        public var wait = TimeSpan(seconds: 10)

        public init() {}
    }

    /// The request method.
    public enum Method: String, OptionChoice {
        /// GET.
        case GET
        /// POST.
        case POST
        /// PUT.
        case PUT
        /// PATCH.
        case PATCH
        /// DELETE.
        case DELETE
        /// HEAD.
        case HEAD
    }

    /// The outputs of `http.request`.
    public struct Outputs: StageOutputs {
        /// The HTTP status.
        @Output("The HTTP status.") public var status = 0
        /// The answer: parsed JSON, or text.
        @Output("The answer: parsed JSON, or text.") public var body = JSONValue.null
        /// The outputs the workflow names in `outputs`, picked from the answer (a name may replace `status` or
        /// `body`).
        @OutputGroup public var picked = JSONValue.object([:])

        public init() {}
    }

    public static let stageType = "http.request"
    public static let resource = StageResource.api
    public static let summary =
        "Calls any REST API: JSON body template, expected statuses, outputs picked by JSON pointer or header."

    /// The outputs the workflow names in `outputs` beside the status and the body.
    public static func outputSchema(for with: JSONValue) -> OutputSchema {
        let declared = (with["outputs"]?.objectValue ?? [:]).keys.sorted().map {
            OutputField($0, "Picked from the answer.")
        }
        return OutputSchema(outputSchema.fields + declared)
    }

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let method = HTTPMethod(rawValue: options.method.rawValue)
        var headers = options.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let action = "\(method.rawValue) \(options.url)"
        let exchange = HTTPExchange(
            client: context.httpClient, stallTimeout: options.timeout, answerTimeout: options.timeout)
        var marker: String?
        if let reconcile = options.reconcile {
            let key = try await context.idempotencyKey("request")
            if let intent = context.lastCheckpoint(as: CreateIntent.self), intent.marker == key,
                let wait = intent.lookup(waiting: reconcile.wait),
                let found = try await adopt(
                    reconcile, headers: headers, exchange: exchange, wait: wait, context: context)
            {
                return try outputs(options.outputs, body: found, status: 200, headers: nil, action: action)
            }
            try await context.checkpoint(CreateIntent(marker: key))
            marker = key
        }
        if options.json != nil, !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
            headers.append(("Content-Type", "application/json"))
        }
        if options.idempotent { headers.append(("Idempotency-Key", try await context.idempotencyKey("request"))) }
        var request = HTTPClientRequest(url: options.url, method: method, headers: headers)
        if let json = options.json {
            request.body = .bytes(ByteBuffer(data: json.serializedData()))
        } else if let body = options.body {
            request.body = .bytes(ByteBuffer(string: body))
        }
        let answer: HTTPAnswer
        do {
            answer = try await exchange.send(request, doing: action)
            guard
                options.expect.map({ $0.contains(Int(answer.status.code)) }) ?? (200..<300).contains(answer.status.code)
            else { throw HTTPFailure.platform(answer, doing: action) }
        } catch {
            if let marker, let intent = CreateIntent(marker: marker, after: error) {
                try await context.checkpoint(intent)
            }
            throw error
        }
        let body = (try? JSONValue(parsing: Data(buffer: answer.body))) ?? .string(answer.text)
        return try outputs(
            options.outputs, body: body, status: Int(answer.status.code), headers: answer, action: action)
    }

    /// The stage's outputs: the status, the body, and those the workflow declares. `answer` is nil for an
    /// object adopted from a listing, which has no headers.
    private func outputs(
        _ declared: [String: String], body: JSONValue, status: Int, headers answer: HTTPAnswer?, action: String
    ) throws -> Outputs {
        var picked: [String: JSONValue] = [:]
        for (name, selector) in declared {
            if selector.hasPrefix("header:") {
                let header = String(selector.dropFirst("header:".count)).trimmingCharacters(in: .whitespaces)
                guard let value = answer?.headers.first(name: header) else {
                    let source =
                        answer == nil
                        ? "the object found by reconcile has no headers" : "the answer has no \(header) header"
                    throw PlatformError(.invalidResponse, "\(action): \(source) (output \(name))")
                }
                picked[name] = .string(value)
            } else {
                guard let value = JSONPointer(selector)?.value(in: body) else {
                    throw PlatformError(
                        .invalidResponse,
                        "\(action): the answer has nothing at \(selector) (output \(name)): \(body.serialized().prefix(300))"
                    )
                }
                picked[name] = value
            }
        }
        return Outputs.with {
            $0.status = status
            $0.body = body
            $0.picked = .object(picked)
        }
    }

    /// The object an unanswered attempt created, found in the `reconcile` listing (the first that matches),
    /// or nil when none shows up within `wait`.
    private func adopt(
        _ reconcile: Reconcile, headers: [(String, String)], exchange: HTTPExchange, wait: TimeSpan,
        context: StageContext
    ) async throws -> JSONValue? {
        guard let pointer = JSONPointer(reconcile.items ?? "") else {
            throw PlatformError(.invalidRequest, "reconcile.items \(reconcile.items ?? "") is not a JSON pointer")
        }
        let matches = try reconcile.match.map { selector, value in
            guard let pointer = JSONPointer(selector) else {
                throw PlatformError(.invalidRequest, "reconcile.match: \(selector) is not a JSON pointer")
            }
            return (pointer, value)
        }
        let action = "looking for what an unanswered attempt created (GET \(reconcile.url))"
        let found = try await lookUp(waiting: wait, for: "object matching reconcile.match", logger: context.logger) {
            let request = HTTPClientRequest(url: reconcile.url, method: .GET, headers: headers)
            let answer = try await exchange.send(request, doing: action)
            guard (200..<300).contains(answer.status.code) else { throw HTTPFailure.platform(answer, doing: action) }
            guard let listing = try? JSONValue(parsing: Data(buffer: answer.body)) else {
                throw PlatformError(.invalidResponse, "\(action): the answer is not JSON: \(answer.bodyExcerpt)")
            }
            let objects =
                reconcile.items == nil
                ? (listing.arrayValue ?? listing["data"]?.arrayValue) : pointer.value(in: listing)?.arrayValue
            guard let objects else {
                throw PlatformError(.invalidResponse, "\(action): the answer has no list of objects (reconcile.items)")
            }
            return objects.filter { object in matches.allSatisfy { $0.0.value(in: object) == $0.1 } }
        }
        guard let object = found.first else { return nil }
        if found.count > 1 {
            context.logger.warning("\(found.count) objects match reconcile.match; adopting the first the listing gives")
        }
        context.logger.notice("adopted an object an unanswered attempt created, found at \(reconcile.url)")
        return object
    }
}

/// An RFC 6901 JSON pointer such as `/upload/upload_link` or `/items/0/id`.
struct JSONPointer {
    let tokens: [String]

    init?(_ text: String) {
        guard text.isEmpty || text.hasPrefix("/") else { return nil }
        tokens =
            text.isEmpty
            ? []
            : text.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
                $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            }
    }

    func value(in root: JSONValue) -> JSONValue? {
        var value = root
        for token in tokens {
            switch value {
            case .object(let members):
                guard let next = members[token] else { return nil }
                value = next
            case .array(let elements):
                guard let index = Int(token), elements.indices.contains(index) else { return nil }
                value = elements[index]
            default:
                return nil
            }
        }
        return value
    }
}
