import HTTPTypes
import Hummingbird
import StageKit

/// An error of the RPC-style VOD API, in its documented shape:
/// `{"RequestId": …, "HostId": …, "Code": …, "Message": …, "Recommend": …}` with the code's HTTP status.
struct VODError: HTTPResponseError {
    var status: HTTPResponse.Status
    var code: String
    var message: String

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let body: JSONValue = [
            "RequestId": .string(RandomID.requestID()),
            "HostId": "vod.sandbox.aliyuncs.com",
            "Code": .string(self.code),
            "Message": .string(self.message),
            "Recommend": .string("https://next.api.aliyun.com/troubleshoot?q=\(self.code)"),
        ]
        return JSONResponse.make(body, status: self.status)
    }

    static func missing(_ parameter: String) -> VODError {
        VODError(
            status: .badRequest, code: "MissingParameter",
            message:
                "The input parameter \"\(parameter)\" that is mandatory for processing this request is not supplied.")
    }

    static func invalid(_ parameter: String, _ detail: String) -> VODError {
        VODError(
            status: .badRequest, code: "InvalidParameter",
            message: "The specified parameter \"\(parameter)\" is not valid: \(detail)")
    }

    static let videoNotFound = VODError(
        status: .notFound, code: "InvalidVideo.NotFound", message: "The video does not exist.")
}
