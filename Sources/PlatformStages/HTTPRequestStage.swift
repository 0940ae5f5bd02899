import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
public import StageKit
import UploadStages

/// `http.request`: any REST call, so a workflow can create, activate and describe uploads on a platform
/// that has no stage of its own. The body is a JSON template; outputs are picked from the answer with
/// JSON pointers (`/upload/link`) or headers (`header:Location`), and declared by the workflow.
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
        @Option("Statuses that count as success (default: any 2xx).") public var expect: [Int]?
        /// Output name → JSON pointer into the answer ("/id") or "header:Name".
        @Option("Output name → JSON pointer into the answer (\"/id\") or \"header:Name\".")
        public var outputs: [String: String] = [:]
        /// Send an Idempotency-Key kept across retries and reruns, so a repeated POST does not act twice.
        @Option("Send an Idempotency-Key kept across retries and reruns, so a repeated POST does not act twice.")
        public var idempotent = false
        /// The longest wait for the answer.
        @Option("The longest wait for the answer.") public var timeout = TimeSpan(seconds: 60)

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

    public typealias Outputs = JSONValue

    public static let stageType = "http.request"
    public static let resource = StageResource.api
    public static let summary =
        "Calls any REST API: JSON body template, expected statuses, outputs picked by JSON pointer or header."
    public static let outputSchema = OutputSchema(
        [OutputField("status", "The HTTP status."), OutputField("body", "The answer: parsed JSON, or text.")],
        isOpen: true)

    public static func outputSchema(for with: JSONValue) -> OutputSchema {
        let declared = (with["outputs"]?.objectValue ?? [:]).keys.sorted().map {
            OutputField($0, "Picked from the answer.")
        }
        return OutputSchema(outputSchema.fields + declared)
    }

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> JSONValue {
        let method = HTTPMethod(rawValue: options.method.rawValue)
        var headers = options.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
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
        let exchange = HTTPExchange(client: .uploads, stallTimeout: options.timeout, answerTimeout: options.timeout)
        let action = "\(method.rawValue) \(options.url)"
        let answer: HTTPAnswer
        do {
            answer = try await exchange.send(request, doing: action)
        } catch {
            throw PlatformError.transfer(error)
        }
        let status = Int(answer.status.code)
        guard options.expect.map({ $0.contains(status) }) ?? (200..<300).contains(status) else {
            throw PlatformError.answer(answer, doing: action)
        }
        let body = (try? JSONValue(parsing: Data(buffer: answer.body))) ?? .string(answer.text)
        var outputs: [String: JSONValue] = ["status": .int(status), "body": body]
        for (name, selector) in options.outputs {
            if selector.hasPrefix("header:") {
                let header = String(selector.dropFirst("header:".count)).trimmingCharacters(in: .whitespaces)
                guard let value = answer.headers.first(name: header) else {
                    throw PlatformError(
                        .invalidResponse, "\(action): the answer has no \(header) header (output \(name))")
                }
                outputs[name] = .string(value)
            } else {
                guard let value = JSONPointer(selector)?.value(in: body) else {
                    throw PlatformError(
                        .invalidResponse,
                        "\(action): the answer has nothing at \(selector) (output \(name)): \(answer.bodyExcerpt)")
                }
                outputs[name] = value
            }
        }
        return .object(outputs)
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
