import HTTPTypes
import Hummingbird
import StageKit

/// An error of the upload endpoints (tus, streaming, generic content): a status, a plain-text
/// message and the headers the protocol asks for. Upload servers answer in plain text, not in
/// Vimeo's JSON error format.
struct UploadFailure: HTTPResponseError {
    var status: HTTPResponse.Status
    var message: String
    var headers: HTTPFields

    init(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONResponse.text(self.message + "\n", status: self.status, headers: self.headers)
    }
}
