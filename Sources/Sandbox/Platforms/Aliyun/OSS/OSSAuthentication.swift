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

    /// A request's access key and how to check its signature with that key's secret.
    private typealias Signed = (accessKeyID: String, verify: (_ secret: String) throws -> Void)

    /// Checks `request` to `bucket/key`.
    static func check(
        _ request: Request, bucket: String, key: String, query: [String: String], aliyun: AliyunState
    ) async throws {
        let authorization = request.headers[.authorization] ?? ""
        let signed: Signed
        if authorization.isEmpty, query["x-oss-signature-version"] != nil {
            signed = try self.presignedV4(request, bucket: bucket, key: key, query: query)
        } else if let v4 = OSSV4Authorization(authorization) {
            signed = try self.signedV4(request, v4, bucket: bucket, key: key, query: query)
        } else if authorization.hasPrefix(OSSV4Authorization.algorithm) {
            throw OSSError(
                status: .badRequest, code: "InvalidArgument",
                message: "Invalid credential in Authorization header (OSS4-HMAC-SHA256 Credential=…, Signature=…).",
                ec: "0002-00000205")
        } else {
            guard aliyun.core.configuration.acceptsOSSV1 else {
                throw OSSError(
                    status: .forbidden, code: "AccessDenied",
                    message:
                        "OSS no longer supports V1 signatures for this account: sign the request with V4 (OSS4-HMAC-SHA256).",
                    ec: "0002-00000080")
            }
            signed = try self.signedV1(request, bucket: bucket, key: key, query: query)
        }
        guard let known = await aliyun.secret(ofAccessKey: signed.accessKeyID) else {
            throw OSSError(
                status: .forbidden, code: "InvalidAccessKeyId",
                message: "The OSS Access Key Id you provided does not exist in our records.",
                extra: [("OSSAccessKeyId", signed.accessKeyID)])
        }
        if let temporary = known.temporary {
            try self.checkToken(request.headers[.ossSecurityToken] ?? query["x-oss-security-token"], against: temporary)
        }
        try signed.verify(known.secret)
        if let temporary = known.temporary, temporary.bucket != bucket || temporary.object != key {
            throw OSSError.accessDenied
        }
        let reads = request.method == .head || (request.method == .get && query["uploadId"] == nil)
        if known.temporary != nil, reads, aliyun.core.configuration.ossSTSWriteOnly {
            throw OSSError.accessDenied
        }
    }

    /// A presigned V4 URL (`x-oss-signature-version=OSS4-HMAC-SHA256`, `x-oss-credential`, `x-oss-date`,
    /// `x-oss-expires` of at most 7 days, `x-oss-signature`), once its time and scope are checked: its canonical
    /// request is a header-signed one's, with every query parameter but the signature.
    private static func presignedV4(
        _ request: Request, bucket: String, key: String, query: [String: String]
    ) throws -> Signed {
        guard query["x-oss-signature-version"] == OSSV4Authorization.algorithm,
            let v4 = OSSV4Authorization(
                credential: query["x-oss-credential"] ?? "", additionalHeaders: query["x-oss-additional-headers"],
                signature: query["x-oss-signature"] ?? ""),
            let timestamp = query["x-oss-date"], let date = basicISO8601(timestamp),
            let expires = query["x-oss-expires"].flatMap(Int.init), (1...604_800).contains(expires)
        else {
            throw OSSError(
                status: .badRequest, code: "InvalidArgument",
                message:
                    "A presigned V4 URL needs x-oss-signature-version, x-oss-credential, x-oss-date, x-oss-expires (at most 604800) and x-oss-signature."
            )
        }
        guard date.timeIntervalSinceNow <= AliyunSignature.requestTimeWindow else {
            throw OSSError(
                status: .forbidden, code: "RequestTimeTooSkewed",
                message: "The difference between the request time and the current time is too large.")
        }
        guard date.addingTimeInterval(TimeInterval(expires)) >= Date() else {
            throw OSSError(status: .forbidden, code: "AccessDenied", message: "Request has expired.")
        }
        guard timestamp.hasPrefix(v4.date), v4.region == region else {
            throw OSSError(
                status: .badRequest, code: "InvalidArgument",
                message: "The credential's date or region does not match x-oss-date or the bucket's region.")
        }
        let canonical = v4.canonicalRequest(
            method: request.method.rawValue, bucket: bucket, key: key,
            query: query.filter { $0.key != "x-oss-signature" }, headers: request.headers,
            host: request.head.authority)
        return checked(v4, timestamp: timestamp, canonical: canonical, presigned: true)
    }

    /// A V4-signed request, once its time and scope are checked.
    private static func signedV4(
        _ request: Request, _ v4: OSSV4Authorization, bucket: String, key: String, query: [String: String]
    ) throws -> Signed {
        let timestamp = try self.checkV4Date(of: request, scope: v4)
        let canonical = v4.canonicalRequest(
            method: request.method.rawValue, bucket: bucket, key: key, query: query, headers: request.headers,
            host: request.head.authority)
        return checked(v4, timestamp: timestamp, canonical: canonical, presigned: false)
    }

    /// The V4 signature check of a request whose `canonical` request is known: its signature must be the one the
    /// caller's secret makes. The error of a header-signed request also names the string to sign and the signature
    /// sent; a presigned URL's names its canonical request and key only.
    private static func checked(_ v4: OSSV4Authorization, timestamp: String, canonical: String, presigned: Bool)
        -> Signed
    {
        let stringToSign = v4.stringToSign(timestamp: timestamp, canonicalRequest: canonical)
        let extra =
            presigned
            ? [("CanonicalRequest", canonical), ("OSSAccessKeyId", v4.accessKeyID)]
            : [
                ("StringToSign", stringToSign), ("CanonicalRequest", canonical), ("SignatureProvided", v4.signature),
                ("OSSAccessKeyId", v4.accessKeyID),
            ]
        return (
            v4.accessKeyID,
            { secret in
                guard v4.expectedSignature(of: stringToSign, secret: secret) == v4.signature else {
                    throw OSSError(
                        status: .forbidden, code: "SignatureDoesNotMatch",
                        message: "The request signature we calculated does not match the signature you provided.",
                        extra: extra, ec: "0002-00000040")
                }
            }
        )
    }

    /// A V1-signed request, once its date is checked.
    private static func signedV1(
        _ request: Request, bucket: String, key: String, query: [String: String]
    ) throws -> Signed {
        let (accessKeyID, signature) = try self.credentialV1(of: request)
        try self.checkDate(of: request)
        let stringToSign = AliyunSignature.ossStringToSign(
            method: request.method.rawValue, headers: request.headers, bucket: bucket, key: key, query: query)
        return (
            accessKeyID,
            { secret in
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
        )
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
    private static func checkToken(_ token: String?, against temporary: STSCredential) throws {
        guard temporary.expiresAt > Date() else {
            throw OSSError(
                status: .forbidden, code: "SecurityTokenExpired",
                message: "The security token you provided has expired.")
        }
        guard token == temporary.securityToken else {
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
