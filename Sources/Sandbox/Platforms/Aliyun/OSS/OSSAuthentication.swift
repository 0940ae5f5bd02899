import Foundation
import HTTPTypes
import Hummingbird
import StageKit

/// The checks of every OSS request before it is served: OSS's V1 header signature
/// (`Authorization: OSS AccessKeyId:Signature`), the `Date`, and for a temporary credential from `UploadAuth`
/// its `x-oss-security-token`, its expiry (`SecurityTokenExpired`) and the one object it opens.
enum OSSAuthentication {
    /// Checks `request` to `bucket/key`.
    static func check(
        _ request: Request, bucket: String, key: String, query: [String: String], aliyun: AliyunState
    ) async throws {
        let (accessKeyID, signature) = try self.credential(of: request)
        guard let known = await aliyun.secret(ofAccessKey: accessKeyID) else {
            throw OSSError(
                status: .forbidden, code: "InvalidAccessKeyId",
                message: "The OSS Access Key Id you provided does not exist in our records.",
                extra: [("OSSAccessKeyId", accessKeyID)])
        }
        if let temporary = known.temporary {
            try self.checkToken(of: request, against: temporary)
        }
        try self.checkDate(of: request)
        let stringToSign = AliyunSignature.ossStringToSign(
            method: request.method.rawValue, headers: request.headers, bucket: bucket, key: key, query: query)
        guard AliyunSignature.hmacSHA1(stringToSign, key: known.secret) == signature else {
            throw OSSError(
                status: .forbidden, code: "SignatureDoesNotMatch",
                message: "The request signature we calculated does not match the signature you provided.",
                extra: [
                    ("StringToSign", stringToSign), ("SignatureProvided", signature), ("OSSAccessKeyId", accessKeyID),
                ])
        }
        if let temporary = known.temporary, temporary.bucket != bucket || temporary.object != key {
            throw OSSError.accessDenied
        }
    }

    /// The access key id and signature of `Authorization: OSS AccessKeyId:Signature`.
    private static func credential(of request: Request) throws -> (accessKeyID: String, signature: String) {
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("OSS "),
            let colon = authorization.lastIndex(of: ":")
        else {
            throw OSSError(
                status: .forbidden, code: "AccessDenied",
                message: "AccessDenied: sign the request (Authorization: OSS AccessKeyId:Signature).")
        }
        let accessKeyID = String(authorization[authorization.index(authorization.startIndex, offsetBy: 4)..<colon])
        return (accessKeyID, String(authorization[authorization.index(after: colon)...]))
    }

    /// A temporary credential works until it expires, and only with its security token.
    private static func checkToken(of request: Request, against temporary: STSCredential) throws {
        guard temporary.expiresAt > Date() else {
            throw OSSError(
                status: .forbidden, code: "SecurityTokenExpired",
                message: "The security token you provided has expired.")
        }
        guard request.headers[.ossSecurityToken] == temporary.securityToken else {
            throw OSSError(
                status: .forbidden, code: "InvalidSecurityToken",
                message: "The security token you provided is invalid.")
        }
    }

    /// `x-oss-date` (or `Date`) is an HTTP date within ``AliyunSignature/requestTimeWindow`` of the sandbox's
    /// clock.
    private static func checkDate(of request: Request) throws {
        let dateText = request.headers[.ossDate] ?? request.headers[.date] ?? ""
        guard let date = HTTPDate.parse(dateText) else {
            throw OSSError(
                status: .forbidden, code: "AccessDenied", message: "The request needs a valid Date header.")
        }
        guard abs(date.timeIntervalSinceNow) <= AliyunSignature.requestTimeWindow else {
            throw OSSError(
                status: .forbidden, code: "RequestTimeTooSkewed",
                message: "The difference between the request time and the current time is too large.")
        }
    }
}
