import Crypto
import Foundation
import HTTPTransport
import StageKit

/// Which of OSS's signatures a request carries.
enum OSSSignatureVersion: Sendable, Equatable {
    /// `OSS AccessKeyId:Signature` (HMAC-SHA1): refused for accounts made since 2025-03-01 and buckets made since
    /// 2025-09-01 (403, EC 0002-00000080), kept for older ones and for endpoints that speak nothing else.
    case v1
    /// `OSS4-HMAC-SHA256`, scoped to a region such as `cn-shanghai` (the region id, not `oss-cn-shanghai`).
    case v4(region: String)
}

/// Signs OSS requests for one credential with one signature version.
struct OSSSigner: Sendable {
    let credentials: AlibabaAccessKey
    let version: OSSSignatureVersion

    init(credentials: AlibabaAccessKey, version: OSSSignatureVersion) {
        self.credentials = credentials
        self.version = version
    }

    /// The headers to add to a request to `/bucket/key` with `query` (decoded names and values; nil or empty
    /// for a name alone, such as `uploads`) and `headers`: the date, the security token and `Authorization`.
    func sign(
        method: String, bucket: String, key: String, query: [(String, String?)], headers: [(String, String)], date: Date
    ) -> [(String, String)] {
        switch version {
        case .v1: signV1(method: method, bucket: bucket, key: key, query: query, headers: headers, date: date)
        case .v4(let region):
            signV4(method: method, bucket: bucket, key: key, query: query, headers: headers, date: date, region: region)
        }
    }

    /// The sub-resources the V1 signature covers; other query parameters are not signed.
    static let subresources: Set<String> = [
        "uploads", "uploadId", "partNumber", "security-token", "acl", "append", "position", "tagging",
    ]

    /// OSS's V1 header signature: `Authorization: OSS AccessKeyId:Signature`, where the signature is the base64
    /// HMAC-SHA1 (keyed with the secret) of the verb, `Content-MD5`, `Content-Type`, `Date`, the `x-oss-*` headers
    /// (lower-case, sorted, `name:value` lines) and the canonical resource `/bucket/key` with the signed
    /// sub-resources (`uploads`, `uploadId`, `partNumber`, …) sorted. A temporary credential's token goes in
    /// `x-oss-security-token`, which is signed with the other `x-oss-*` headers.
    private func signV1(
        method: String, bucket: String, key: String, query: [(String, String?)], headers: [(String, String)], date: Date
    ) -> [(String, String)] {
        var added = [("Date", Self.httpDate(date))]
        if let token = credentials.securityToken { added.append(("x-oss-security-token", token)) }
        let all = headers + added
        func header(_ name: String) -> String {
            all.first { $0.0.lowercased() == name }?.1 ?? ""
        }
        let canonicalHeaders = all.filter { $0.0.lowercased().hasPrefix("x-oss-") }
            .map { ($0.0.lowercased(), $0.1.trimmingCharacters(in: .whitespaces)) }.sorted { $0.0 < $1.0 }
            .map { "\($0.0):\($0.1)\n" }.joined()
        let signed = query.filter { Self.subresources.contains($0.0) }.sorted { $0.0 < $1.0 }
            .map { name, value in value.map { "\(name)=\($0)" } ?? name }.joined(separator: "&")
        let resource = "/\(bucket)/\(key)" + (signed.isEmpty ? "" : "?" + signed)
        let stringToSign = [
            method, header("content-md5"), header("content-type"), header("date"), canonicalHeaders + resource,
        ]
        .joined(separator: "\n")
        let signature = HMAC<Insecure.SHA1>.authenticationCode(
            for: Data(stringToSign.utf8), using: SymmetricKey(data: Data(credentials.secret.utf8)))
        added.append(("Authorization", "OSS \(credentials.id):\(Data(signature).base64EncodedString())"))
        return added
    }

    /// RFC 1123 in GMT, as `Date` must be.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
