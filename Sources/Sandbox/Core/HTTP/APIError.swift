import HTTPTypes
import Hummingbird
import StageKit

/// An error answered in Vimeo's error format:
/// `{"error": …, "link": null, "developer_message": …, "error_code": N}`, plus
/// `invalid_parameters` naming each offending field for validation errors (code 2204).
struct APIError: HTTPResponseError {
    var status: HTTPResponse.Status
    /// Vimeo's numeric `error_code`.
    var code: Int
    /// The user-facing `error` text.
    var message: String
    /// The `developer_message` text.
    var developerMessage: String
    /// Fields named in `invalid_parameters` (field path, message).
    var invalidParameters: [(field: String, message: String)] = []
    /// Extra response headers (`Retry-After`, `WWW-Authenticate`, …).
    var headers: HTTPFields = [:]

    var body: JSONValue {
        var members: [String: JSONValue] = [
            "error": .string(self.message),
            "link": .null,
            "developer_message": .string(self.developerMessage),
            "error_code": .integer(Int64(self.code)),
        ]
        if !self.invalidParameters.isEmpty {
            members["invalid_parameters"] = .array(
                self.invalidParameters.map { parameter in
                    [
                        "field": .string(parameter.field),
                        "error_code": .integer(Int64(self.code)),
                        "error": .string(parameter.message),
                        "developer_message": .string(parameter.message),
                    ]
                }
            )
        }
        return .object(members)
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = JSONResponse.make(self.body, status: self.status, contentType: JSONResponse.errorType)
        response.headers.append(contentsOf: self.headers)
        return response
    }
}

extension APIError {
    /// 401, code 8003: no token, a wrong one, or one whose lifetime ran out.
    static func unauthorized(_ detail: String) -> APIError {
        APIError(
            status: .unauthorized,
            code: 8003,
            message: "You must provide a valid authenticated access token.",
            developerMessage: detail,
            headers: [.wwwAuthenticate: "Bearer realm=\"sandbox\""]
        )
    }

    /// 400, code 2204, naming the field that failed validation.
    static func invalidParameter(_ field: String, _ message: String) -> APIError {
        APIError(
            status: .badRequest,
            code: 2204,
            message: "Something strange occurred. Please contact the app owners.",
            developerMessage: "The parameter `\(field)` is invalid: \(message)",
            invalidParameters: [(field, message)]
        )
    }

    /// 400, code 2205: the body is not the JSON this endpoint expects.
    static func malformedBody(_ detail: String) -> APIError {
        APIError(
            status: .badRequest,
            code: 2205,
            message: "Something strange occurred. Please contact the app owners.",
            developerMessage: detail
        )
    }

    /// 404, code 5000.
    static func notFound(_ what: String) -> APIError {
        APIError(
            status: .notFound,
            code: 5000,
            message: "The requested \(what) couldn't be found.",
            developerMessage: "No such \(what) exists."
        )
    }

    /// 403, code 4101: the upload would not fit in the free quota.
    static func quotaExceeded(size: Int64, free: Int64) -> APIError {
        APIError(
            status: .forbidden,
            code: 4101,
            message: "You don't have enough free space to upload this video (quota exceeded).",
            developerMessage: "quota exceeded: upload.size \(size) is larger than the free space \(free).",
            invalidParameters: [("upload.size", "quota exceeded")]
        )
    }

    /// Checks the `video_file_id` and `signature` a `complete_uri` carries (400, code 2204, when wrong).
    static func checkCompleteURI(
        videoFileID: String?, signature: String?, expected: (videoFileID: String, signature: String)
    ) throws {
        guard videoFileID == expected.videoFileID, signature == expected.signature else {
            throw APIError.invalidParameter(
                "signature", "The video_file_id or signature of complete_uri does not match.")
        }
    }

    /// 400, code 2230: `complete_uri` was called before every byte arrived.
    static func incompleteUpload(stored: Int64, size: Int64?) -> APIError {
        let total = size.map(String.init) ?? "the"
        return APIError(
            status: .badRequest,
            code: 2230,
            message: "The upload is not complete.",
            developerMessage: "Only \(stored) of \(total) bytes have been received; "
                + "verify with `PUT upload_link` and `Content-Range: bytes */\(size.map(String.init) ?? "*")` and resume.",
            invalidParameters: [("upload.size", "only \(stored) of \(total) bytes received")]
        )
    }
}
