import HTTPTypes
import Hummingbird
import NIOCore
import StageKit

/// Builds JSON responses and reads JSON request bodies for the API routes.
enum JSONResponse {
    /// The media type of ``APIError``'s body: Vimeo's error type (`+json`, so JSON clients accept it), which
    /// the generic API answers too.
    static let errorType = "application/vnd.vimeo.error+json; charset=utf-8"

    /// Largest JSON request body the API reads (uploads never go through here).
    static let maxRequestBody = 1 << 20

    static func make(
        _ value: JSONValue,
        status: HTTPResponse.Status = .ok,
        contentType: String = "application/json; charset=utf-8",
        headers: HTTPFields = [:]
    ) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        return Response(
            status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.encoded())))
    }

    /// A plain-text response, for the tus and sandbox endpoints.
    static func text(_ text: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// An empty response with `status` and `headers`.
    static func empty(_ status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        Response(status: status, headers: headers, body: ResponseBody())
    }

    /// Reads the request body as a JSON object; an empty body reads as `{}`.
    static func readObject(_ request: inout Request) async throws -> [String: JSONValue] {
        let value = try await readValue(&request)
        if value == .null { return [:] }
        guard let object = value.objectValue else {
            throw APIError.malformedBody("The request body must be a JSON object.")
        }
        return object
    }

    /// Reads the request body as any JSON value; an empty body reads as `null`.
    static func readValue(_ request: inout Request) async throws -> JSONValue {
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: Self.maxRequestBody)
        } catch {
            throw APIError.malformedBody("The request body is larger than \(Self.maxRequestBody) bytes.")
        }
        if buffer.readableBytes == 0 {
            return .null
        }
        guard let value = JSONValue.parse(buffer.readableBytesView) else {
            throw APIError.malformedBody("The request body is not valid JSON.")
        }
        return value
    }
}
