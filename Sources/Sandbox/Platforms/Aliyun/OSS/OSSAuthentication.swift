import Foundation
import HTTPTypes
import Hummingbird
import StageKit

/// The checks of every OSS request before it is served: its signature, V4 (`OSS4-HMAC-SHA256`,
/// ``OSSV4Authorization``) or, unless the sandbox refuses it as Alibaba does for accounts made since 2025-03-01,
/// V1 (`Authorization: OSS AccessKeyId:Signature`); the time it was made; and for a temporary credential from
/// `UploadAuth` its `x-oss-security-token`, its expiry (`SecurityTokenExpired`) and the one object it opens.
enum OSSAuthentication {
    /// The region the sandbox's OSS is in, which a V4 signature's scope must name (`UploadAuth` gives it).
    static let region = "cn-shanghai"

    /// Checks `request` to `bucket/key`.
    static func check(
        _ request: Request, bucket: String, key: String, query: [String: String], aliyun: AliyunState
    ) async throws {
        let authorization = request.headers[.authorization] ?? ""
        let accessKeyID: String
        let verify: (String) throws -> Void
        if let v4 = OSSV4Authorization(authorization) {
            accessKeyID = v4.accessKeyID
            let timestamp = try self.checkV4Date(of: request, scope: v4)
            let canonical = v4.canonicalRequest(
                method: request.method.rawValue, bucket: bucket, key: key, query: query, headers: request.headers,
                host: request.head.authority)
            verify = { secret in
                let stringToSign = v4.stringToSign(timestamp: timestamp, canonicalRequest: canonical)
                guard v4.expectedSignature(of: stringToSign, secret: secret) == v4.signature else {
                    throw OSSError(
                        status: .forbidden, code: "SignatureDoesNotMatch",
                        message: "The request signature we calculated does not match the signature you provided.",
                        extra: [
                            ("StringToSign", stringToSign), ("CanonicalRequest", canonical),
                            ("SignatureProvided", v4.signature), ("OSSAccessKeyId", accessKeyID),
                        ], ec: "0002-00000040")
                }
            }
        } else if authorization.hasPrefix("OSS4-HMAC-SHA256") {
            throw OSSError(
                status: .badRequest, code: "InvalidArgument",
                message: "Invalid credential in Authorization header (OSS4-HMAC-SHA256 Credential=…, Signature=…).",
                ec: "0002-00000205")
        } else {
            let (id, signature) = try self.credentialV1(of: request)
            guard aliyun.core.configuration.acceptsOSSV1 else {
                throw OSSError(
                    status: .forbidden, code: "AccessDenied",
                    message:
                        "OSS no longer supports V1 signatures for this account: sign the request with V4 (OSS4-HMAC-SHA256).",
                    ec: "0002-00000080")
            }
            accessKeyID = id
            try self.checkDate(of: request)
            let stringToSign = AliyunSignature.ossStringToSign(
                method: request.method.rawValue, headers: request.headers, bucket: bucket, key: key, query: query)
            verify = { secret in
                guard AliyunSignature.hmacSHA1(stringToSign, key: secret) == signature else {
                    throw OSSError(
                        status: .forbidden, code: "SignatureDoesNotMatch",
                        message: "The request signature we calculated does not match the signature you provided.",
                        extra: [
                            ("StringToSign", stringToSign), ("SignatureProvided", signature),
                            ("OSSAccessKeyId", accessKeyID),
                        ])
                }
            }
        }
        guard let known = await aliyun.secret(ofAccessKey: accessKeyID) else {
            throw OSSError(
                status: .forbidden, code: "InvalidAccessKeyId",
                message: "The OSS Access Key Id you provided does not exist in our records.",
                extra: [("OSSAccessKeyId", accessKeyID)])
        }
        if let temporary = known.temporary {
            try self.checkToken(of: request, against: temporary)
        }
        try verify(known.secret)
        if let temporary = known.temporary, temporary.bucket != bucket || temporary.object != key {
            throw OSSError.accessDenied
        }
    }

    /// The access key id and signature of `Authorization: OSS AccessKeyId:Signature`.
    private static func credentialV1(of request: Request) throws -> (accessKeyID: String, signature: String) {
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("OSS "),
            let colon = authorization.lastIndex(of: ":")
        else {
            throw OSSError(
                status: .forbidden, code: "AccessDenied",
                message: "AccessDenied: sign the request (Authorization: OSS4-HMAC-SHA256 Credential=…).")
        }
        let accessKeyID = String(authorization[authorization.index(authorization.startIndex, offsetBy: 4)..<colon])
        return (accessKeyID, String(authorization[authorization.index(after: colon)...]))
    }

    /// A V4 request's `x-oss-date` (ISO 8601 basic, `20250101T120000Z`): present, within
    /// ``AliyunSignature/requestTimeWindow`` of the sandbox's clock, on the scope's date, whose region is the
    /// sandbox's. Returns it.
    private static func checkV4Date(of request: Request, scope: OSSV4Authorization) throws -> String {
        guard let timestamp = request.headers[.ossDate] else {
            throw OSSError(
                status: .forbidden, code: "AccessDenied", message: "A V4-signed request needs an x-oss-date header.",
                ec: "0002-00000503")
        }
        guard let date = basicISO8601(timestamp) else {
            throw OSSError(
                status: .forbidden, code: "AccessDenied",
                message: "x-oss-date must be an ISO 8601 basic time such as 20250101T120000Z.", ec: "0002-00000502")
        }
        guard abs(date.timeIntervalSinceNow) <= AliyunSignature.requestTimeWindow else {
            throw OSSError(
                status: .forbidden, code: "RequestTimeTooSkewed",
                message: "The difference between the request time and the current time is too large.")
        }
        guard timestamp.hasPrefix(scope.date) else {
            throw OSSError(
                status: .badRequest, code: "InvalidArgument",
                message: "The date in the credential scope does not match x-oss-date.", ec: "0002-00000212")
        }
        guard scope.region == region else {
            throw OSSError(
                status: .badRequest, code: "InvalidArgument",
                message: "Invalid signing region in Authorization header.",
                ec: "0002-00000226")
        }
        return timestamp
    }

    /// The time of `yyyyMMdd'T'HHmmss'Z'` (UTC); nil for any other text.
    static func basicISO8601(_ text: String) -> Date? {
        let characters = Array(text.utf8)
        guard characters.count == 16, characters[8] == UInt8(ascii: "T"), characters[15] == UInt8(ascii: "Z") else {
            return nil
        }
        func number(_ range: Range<Int>) -> Int? {
            guard characters[range].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                return nil
            }
            return Int(String(decoding: characters[range], as: UTF8.self))
        }
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC") ?? utc.timeZone
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15)
        else { return nil }
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard components.isValidDate(in: utc) else { return nil }
        return utc.date(from: components)
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
