import Hummingbird
import NIOCore
import StageKit

/// The parameters of one RPC call.
struct RPCCall: Sendable {
    let parameters: [String: String]

    /// The parameters of `request`: its query, and its form body when it has one (the query wins).
    static func read(_ request: Request) async throws -> RPCCall {
        var request = request
        var parameters = AliyunSignature.decodeForm((request.uri.query ?? "")[...])
        if request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") ?? false {
            let body = try await request.collectBody(upTo: JSONResponse.maxRequestBody)
            let form = AliyunSignature.decodeForm(String(buffer: body)[...])
            parameters.merge(form) { query, _ in query }
        }
        return RPCCall(parameters: parameters)
    }

    subscript(_ name: String) -> String? {
        parameters[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    func required(_ name: String) throws -> String {
        guard let value = self[name] else { throw VODError.missing(name) }
        return value
    }

    func integer(_ name: String) throws -> Int64? {
        guard let text = self[name] else { return nil }
        guard let value = Int64(text) else { throw VODError.invalid(name, "\(text) is not an integer") }
        return value
    }
}
