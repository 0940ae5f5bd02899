import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
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

/// An OSS error, in its documented XML shape (`<Error><Code>…</Code><Message>…</Message>…</Error>`), with
/// `x-oss-request-id`.
struct OSSError: HTTPResponseError {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    /// More elements of the body (`StringToSign` for a signature that does not match, …).
    var extra: [(String, String)] = []

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let requestID = RandomID.requestID()
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>\n"
        xml += "  <Code>\(OSSXML.escape(self.code))</Code>\n  <Message>\(OSSXML.escape(self.message))</Message>\n"
        xml += "  <RequestId>\(requestID)</RequestId>\n  <HostId>oss.sandbox.aliyuncs.com</HostId>\n"
        for (name, value) in self.extra { xml += "  <\(name)>\(OSSXML.escape(value))</\(name)>\n" }
        xml += "</Error>\n"
        var response = OSSXML.response(xml, status: self.status)
        response.headers[.ossRequestID] = requestID
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

/// OSS's XML answers.
enum OSSXML {
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func response(_ xml: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/xml"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: xml)))
    }

    /// A time as OSS writes it (`2012-02-24T06:07:48.000Z`: the SDKs expect the milliseconds).
    static func time(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'.000Z'"
        return formatter.string(from: date)
    }

    /// The text of every `<name>` element in `xml`, in order (the complete request's `PartNumber` and `ETag`).
    static func elements(_ name: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = xml[...]
        while let open = rest.range(of: "<\(name)>"), let close = rest[open.upperBound...].range(of: "</\(name)>") {
            found.append(
                String(rest[open.upperBound..<close.lowerBound]).replacingOccurrences(of: "&quot;", with: "\"")
                    .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                    .replacingOccurrences(of: "&amp;", with: "&"))
            rest = rest[close.upperBound...]
        }
        return found
    }
}

extension RandomID {
    /// A request id in the shape Alibaba Cloud answers (upper-case hex groups).
    static func requestID() -> String {
        let hex = RandomID.hex(bytes: 16).uppercased()
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }
}
