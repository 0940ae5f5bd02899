import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import StageKit

/// The two signatures Alibaba Cloud documents, computed from a received request so the sandbox can check
/// them: the RPC-style API's (`Signature` over the sorted, percent-encoded parameters, HMAC-SHA1 keyed with
/// `secret&`) and OSS's V1 header signature (`Authorization: OSS AccessKeyId:Signature`, HMAC-SHA1 over the
/// verb, `Content-MD5`, `Content-Type`, `Date`, the `x-oss-*` headers and the canonical resource).
enum AliyunSignature {
    /// How far the time a signed request carries (the RPC API's `Timestamp`, OSS's `Date` or `x-oss-date`) may be
    /// from the sandbox's clock. Alibaba Cloud has one rule for both: a request more than 15 minutes off is
    /// refused (`InvalidTimeStamp.Expired`, `RequestTimeTooSkewed`), so a signed request cannot be replayed
    /// later.
    static let requestTimeWindow: TimeInterval = 15 * 60

    /// RFC 3986 encoding as the RPC signature uses it: every byte but `A-Z a-z 0-9 - _ . ~` as `%XX`.
    static func percentEncode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(UnicodeScalar(byte))
            default:
                encoded += String(format: "%%%02X", byte)
            }
        }
        return encoded
    }

    /// `METHOD&%2F&` and the encoded canonical query of every parameter but `Signature`.
    static func rpcStringToSign(method: String, parameters: [String: String]) -> String {
        let canonical = parameters.filter { $0.key != "Signature" }.sorted { $0.key < $1.key }
            .map { percentEncode($0.key) + "=" + percentEncode($0.value) }.joined(separator: "&")
        return method + "&" + percentEncode("/") + "&" + percentEncode(canonical)
    }

    /// HMAC-SHA1 of `text` keyed with `key`, in base64.
    static func hmacSHA1(_ text: String, key: String) -> String {
        let code = HMAC<Insecure.SHA1>.authenticationCode(
            for: Data(text.utf8), using: SymmetricKey(data: Data(key.utf8)))
        return Data(code).base64EncodedString()
    }

    /// The RPC signature of `parameters` for `secret`.
    static func rpcSignature(method: String, parameters: [String: String], secret: String) -> String {
        hmacSHA1(rpcStringToSign(method: method, parameters: parameters), key: secret + "&")
    }

    /// Query parameters (`+` as a space, as form encoding has it), percent-decoded.
    static func decodeForm(_ text: Substring) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                let spaced = part.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            parameters[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return parameters
    }

    /// The sub-resources OSS's V1 signature includes in the canonical resource (the others are not signed).
    static let ossSubresources: Set<String> = [
        "acl", "uploads", "location", "cors", "logging", "website", "referer", "lifecycle", "delete", "append",
        "tagging", "objectMeta", "uploadId", "partNumber", "security-token", "position", "img", "style", "styleName",
        "replication", "replicationProgress", "replicationLocation", "cname", "bucketInfo", "comp", "qos", "live",
        "status", "vod", "startTime", "endTime", "symlink", "x-oss-process", "response-content-type",
        "response-content-language", "response-expires", "response-cache-control", "response-content-disposition",
        "response-content-encoding", "udf", "udfName", "udfImage", "udfId", "udfImageDesc", "udfApplication",
        "udfApplicationLog", "restore", "callback", "callback-var", "policy", "encryption", "versions", "versioning",
        "versionId", "continuation-token",
    ]

    /// OSS's V1 string to sign for a request to `/bucket/key` (`bucket` nil for the service).
    static func ossStringToSign(
        method: String, headers: HTTPFields, bucket: String?, key: String, query: [String: String]
    ) -> String {
        var ossHeaders: [(String, String)] = []
        for field in headers where field.name.canonicalName.hasPrefix("x-oss-") {
            ossHeaders.append((field.name.canonicalName, field.value))
        }
        let canonicalHeaders = ossHeaders.sorted { $0.0 < $1.0 }.map { "\($0.0):\($0.1)\n" }.joined()
        let subresources = query.filter { ossSubresources.contains($0.key) }.sorted { $0.key < $1.key }
            .map { $0.value.isEmpty ? $0.key : "\($0.key)=\($0.value)" }.joined(separator: "&")
        var resource = bucket.map { "/\($0)/\(key)" } ?? "/"
        if !subresources.isEmpty { resource += "?" + subresources }
        let date = headers[.ossDate] ?? headers[.date] ?? ""
        return [
            method, headers[.contentMD5] ?? "", headers[.contentType] ?? "", date,
            canonicalHeaders + resource,
        ].joined(separator: "\n")
    }
}

extension HTTPField.Name {
    static let ossDate = aliyunNamed("x-oss-date")
    static let ossSecurityToken = aliyunNamed("x-oss-security-token")
    static let ossRequestID = aliyunNamed("x-oss-request-id")
    static let contentMD5 = aliyunNamed("Content-MD5")

    /// A name from a literal token (never rejected: each literal above is an RFC 9110 token).
    private static func aliyunNamed(_ token: String) -> HTTPField.Name {
        HTTPField.Name(token) ?? .via
    }
}
