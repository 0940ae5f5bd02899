import Crypto
import Foundation
import HTTPTypes

/// OSS's V4 header signature as Alibaba's "Include a V4 signature in the Authorization header" documents it,
/// computed from a received request so the sandbox can check it:
///
///     Authorization: OSS4-HMAC-SHA256 Credential=AK/20250101/cn-shanghai/oss/aliyun_v4_request,
///         AdditionalHeaders=host, Signature=<64 hex digits>
///
/// The fields come in any order, separated by commas and optional spaces; `AdditionalHeaders` is optional. The
/// signature is HMAC-SHA256, keyed by the chain `"aliyun_v4" + secret` → date → region → `oss` →
/// `aliyun_v4_request`, over `OSS4-HMAC-SHA256`, the request's `x-oss-date`, the scope and the SHA-256 of the
/// canonical request: the verb, `/bucket/key` URI-encoded, every query parameter (encoded, sorted), the
/// `x-oss-*`, `content-type`, `content-md5` and additional headers (lower-case, sorted, `name:value` lines), the
/// additional headers' names and the payload's hash (`UNSIGNED-PAYLOAD`).
struct OSSV4Authorization: Sendable, Equatable {
    /// The algorithm's name, which starts the header.
    static let algorithm = "OSS4-HMAC-SHA256"
    /// The only payload hash OSS takes (`x-oss-content-sha256`, also when the header is absent).
    static let unsignedPayload = "UNSIGNED-PAYLOAD"

    var accessKeyID: String
    /// `YYYYMMDD`.
    var date: String
    var region: String
    /// Lower-case header names, as given.
    var additionalHeaders: [String]
    /// Lower-case hex.
    var signature: String

    /// The header's fields; nil when it is not a V4 authorization or a field is missing or malformed.
    init?(_ header: String) {
        guard header.hasPrefix(Self.algorithm + " ") else { return nil }
        var fields: [String: String] = [:]
        for part in header.dropFirst(Self.algorithm.count + 1).split(separator: ",") {
            let field = part.trimmingCharacters(in: .whitespaces)
            guard let equals = field.firstIndex(of: "=") else { return nil }
            fields[String(field[..<equals])] = String(field[field.index(after: equals)...])
        }
        guard let credential = fields["Credential"], let signature = fields["Signature"] else { return nil }
        self.init(credential: credential, additionalHeaders: fields["AdditionalHeaders"], signature: signature)
    }

    /// The fields of a header, or of a presigned URL's `x-oss-credential`, `x-oss-additional-headers` and
    /// `x-oss-signature`; nil when the credential is not `AK/YYYYMMDD/region/oss/aliyun_v4_request`.
    init?(credential: String, additionalHeaders: String?, signature: String) {
        let scope = credential.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard scope.count == 5, scope[3] == "oss", scope[4] == "aliyun_v4_request", scope[1].count == 8,
            scope[1].allSatisfy(\.isNumber), !scope[0].isEmpty, !scope[2].isEmpty, !signature.isEmpty
        else { return nil }
        (accessKeyID, date, region) = (scope[0], scope[1], scope[2])
        self.additionalHeaders = additionalHeaders.map { $0.split(separator: ";").map(String.init) } ?? []
        self.signature = signature
    }

    /// `date/region/oss/aliyun_v4_request`.
    var scope: String { "\(date)/\(region)/oss/aliyun_v4_request" }

    /// The canonical request of `method` to `/bucket/key` with the decoded `query` and `headers`; `host` is the
    /// request's authority, which HTTP/1.1's `Host` header carries and `headers` do not.
    func canonicalRequest(
        method: String, bucket: String, key: String, query: [String: String], headers: HTTPFields, host: String?
    ) -> String {
        let uri =
            "/"
            + ([bucket] + key.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
            .map(AliyunSignature.percentEncode).joined(separator: "/")
        let canonicalQuery = query.map {
            (AliyunSignature.percentEncode($0.key), AliyunSignature.percentEncode($0.value))
        }
        .sorted { $0.0 < $1.0 }.map { $0.1.isEmpty ? $0.0 : "\($0.0)=\($0.1)" }.joined(separator: "&")
        let signed = Set(additionalHeaders).union(["content-type", "content-md5"])
        var lines: [(String, String)] = []
        for field in headers {
            let name = field.name.canonicalName.lowercased()
            guard name.hasPrefix("x-oss-") || signed.contains(name) else { continue }
            lines.append((name, field.value.trimmingCharacters(in: .whitespaces)))
        }
        if signed.contains("host"), let host, !lines.contains(where: { $0.0 == "host" }) {
            lines.append(("host", host))
        }
        let canonicalHeaders = lines.sorted { $0.0 < $1.0 }.map { "\($0.0):\($0.1)\n" }.joined()
        let payload = headers[.ossContentSHA256] ?? Self.unsignedPayload
        return [
            method, uri, canonicalQuery, canonicalHeaders, additionalHeaders.sorted().joined(separator: ";"), payload,
        ].joined(separator: "\n")
    }

    /// The string the signature covers, for a request made at `timestamp` (its `x-oss-date`).
    func stringToSign(timestamp: String, canonicalRequest: String) -> String {
        let hash = SHA256.hash(data: Data(canonicalRequest.utf8)).map { String(format: "%02x", $0) }.joined()
        return [Self.algorithm, timestamp, scope, hash].joined(separator: "\n")
    }

    /// The signature of `stringToSign` with `secret`.
    func expectedSignature(of stringToSign: String, secret: String) -> String {
        var key = SymmetricKey(data: Data("aliyun_v4\(secret)".utf8))
        for part in [date, region, "oss", "aliyun_v4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key)
            .map { String(format: "%02x", $0) }.joined()
    }
}

extension HTTPField.Name {
    static let ossContentSHA256 = HTTPField.Name("x-oss-content-sha256") ?? .via
    static let ossErrorCode = HTTPField.Name("x-oss-ec") ?? .via
}
