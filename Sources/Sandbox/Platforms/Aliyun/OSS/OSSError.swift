import HTTPTypes
import Hummingbird
import StageKit

/// An OSS error, in its documented XML shape (`<Error><Code>…</Code><Message>…</Message>…</Error>`), with
/// `x-oss-request-id`.
struct OSSError: HTTPResponseError {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    /// More elements of the body (`StringToSign` for a signature that does not match, …).
    var extra: [(String, String)] = []
    /// The error's entry in OSS's error-code catalogue (`0002-00000080`), as the `EC` element and `x-oss-ec`.
    var ec: String?

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let requestID = RandomID.requestID()
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>\n"
        xml += "  <Code>\(OSSXML.escape(self.code))</Code>\n  <Message>\(OSSXML.escape(self.message))</Message>\n"
        xml += "  <RequestId>\(requestID)</RequestId>\n  <HostId>oss.sandbox.aliyuncs.com</HostId>\n"
        for (name, value) in self.extra { xml += "  <\(name)>\(OSSXML.escape(value))</\(name)>\n" }
        if let ec { xml += "  <EC>\(ec)</EC>\n" }
        xml += "</Error>\n"
        var response = OSSXML.response(xml, status: self.status)
        response.headers[.ossRequestID] = requestID
        if let ec { response.headers[.ossErrorCode] = ec }
        return response
    }

    static let accessDenied = OSSError(
        status: .forbidden, code: "AccessDenied", message: "You have no right to access this object.")
    static let noSuchUpload = OSSError(
        status: .notFound, code: "NoSuchUpload",
        message:
            "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."
    )
    static let noSuchKey = OSSError(status: .notFound, code: "NoSuchKey", message: "The specified key does not exist.")
}
