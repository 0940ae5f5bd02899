import Crypto
import Foundation
import HTTPTransport
import StageKit

// OSS's V4 signature, as Alibaba's "Signature Version 4" reference and oss2's `ProviderAuthV4` compute it.
extension OSSSigner {
    static let v4Algorithm = "OSS4-HMAC-SHA256"
    /// The only payload hash OSS takes in `x-oss-content-sha256`: the body is not signed.
    static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// Signs with V4: adds `x-oss-date` (`yyyyMMdd'T'HHmmss'Z'`), `x-oss-content-sha256: UNSIGNED-PAYLOAD`, the
    /// security token, and `Authorization: OSS4-HMAC-SHA256 Credential=AK/day/region/oss/aliyun_v4_request,
    /// Signature=…`. The signature is the hex HMAC-SHA256, with a key derived from the secret, the day and the
    /// region, of a string that hashes the canonical request: the verb, `/bucket/key` URI-encoded with `/` kept,
    /// every query parameter encoded and sorted, the `x-oss-*`, `Content-Type` and `Content-MD5` headers (lower-case
    /// names, values as sent, sorted), an empty line of additional headers, and the payload hash.
    func signV4(
        method: String, bucket: String, key: String, query: [(String, String?)], headers: [(String, String)],
        date: Date, region: String
    ) -> [(String, String)] {
        let time = SigningTime(date)
        var added = [("x-oss-date", time.amzDate), ("x-oss-content-sha256", Self.unsignedPayload)]
        if let token = credentials.securityToken { added.append(("x-oss-security-token", token)) }
        let canonical = Self.canonicalRequestV4(
            method: method, bucket: bucket, key: key, query: query, headers: headers + added)
        let scope = Self.scopeV4(time, region: region)
        let signature = signatureV4(canonical, time: time, region: region)
        added.append(
            ("Authorization", "\(Self.v4Algorithm) Credential=\(credentials.id)/\(scope), Signature=\(signature)"))
        return added
    }

    /// The query of a presigned V4 URL, as oss2's `ProviderAuthV4._sign_url` makes it: `x-oss-signature-version`,
    /// `x-oss-credential`, `x-oss-date`, `x-oss-expires` (seconds; Alibaba allows at most 7 days), the security token,
    /// and `x-oss-signature` over the canonical request of a `method` request with those parameters and no headers.
    func presignV4(
        method: String, bucket: String, key: String, expires: Int, date: Date, region: String
    ) -> [(String, String)] {
        let time = SigningTime(date)
        var query = [
            ("x-oss-credential", "\(credentials.id)/\(Self.scopeV4(time, region: region))"),
            ("x-oss-date", time.amzDate), ("x-oss-expires", String(expires)),
            ("x-oss-signature-version", Self.v4Algorithm),
        ]
        if let token = credentials.securityToken { query.append(("x-oss-security-token", token)) }
        let canonical = Self.canonicalRequestV4(
            method: method, bucket: bucket, key: key, query: query.map { ($0.0, $0.1) }, headers: [])
        query.append(("x-oss-signature", signatureV4(canonical, time: time, region: region)))
        return query
    }

    /// `day/region/oss/aliyun_v4_request`.
    static func scopeV4(_ time: SigningTime, region: String) -> String {
        "\(time.day)/\(region)/oss/aliyun_v4_request"
    }

    /// The hex HMAC-SHA256, with the key derived from the secret, the day and the region, of the string to sign
    /// that hashes `canonical`.
    private func signatureV4(_ canonical: String, time: SigningTime, region: String) -> String {
        let stringToSign = [
            Self.v4Algorithm, time.amzDate, Self.scopeV4(time, region: region),
            HexDigest.text(SHA256.hash(data: Data(canonical.utf8))),
        ].joined(separator: "\n")
        var key = SymmetricKey(data: Data("aliyun_v4\(credentials.secret)".utf8))
        for part in [String(time.day), region, "oss", "aliyun_v4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return HexDigest.text(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
    }

    /// The canonical request V4 hashes (see ``signV4(method:bucket:key:query:headers:date:region:)``).
    static func canonicalRequestV4(
        method: String, bucket: String, key: String, query: [(String, String?)], headers: [(String, String)]
    ) -> String {
        let uri = URIEncoding.encode(Array((bucket.isEmpty ? "/" : "/\(bucket)/\(key)").utf8), keepingSlashes: true)
        let canonicalQuery = query.map { name, value in
            (URIEncoding.encode(Array(name.utf8)), URIEncoding.encode(Array((value ?? "").utf8)))
        }
        .sorted { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
        .map { name, value in value.isEmpty ? name : "\(name)=\(value)" }.joined(separator: "&")
        let signedHeaders = headers.map { ($0.0.lowercased(), $0.1) }
            .filter { $0.0.hasPrefix("x-oss-") || $0.0 == "content-type" || $0.0 == "content-md5" }
            .sorted { $0.0 < $1.0 }.map { "\($0.0):\($0.1)\n" }.joined()
        let payload = headers.first { $0.0.lowercased() == "x-oss-content-sha256" }?.1 ?? unsignedPayload
        return [method, uri, canonicalQuery, signedHeaders, "", payload].joined(separator: "\n")
    }

    /// The region id of an OSS endpoint: `oss-cn-shanghai.aliyuncs.com`, `oss-cn-shanghai-internal.aliyuncs.com`,
    /// `bucket.oss-cn-shanghai.aliyuncs.com` and `cn-shanghai.oss.aliyuncs.com` are all `cn-shanghai`. Nil for an
    /// address that names no region (an IP address, a custom domain, the acceleration endpoint).
    static func region(ofEndpoint endpoint: String) -> String? {
        let host = (URL(string: endpoint.contains("://") ? endpoint : "https://\(endpoint)")?.host ?? endpoint)
            .lowercased()
        guard host.hasSuffix(".aliyuncs.com") else { return nil }
        // The label before `aliyuncs.com` names the region (`oss-cn-shanghai`, `oss-cn-shanghai-internal`), or is
        // `oss` after it (`cn-shanghai.oss`); a bucket's name may come first and may itself start with `oss-`.
        let labels = Array(host.split(separator: ".").dropLast(2))
        guard let last = labels.last else { return nil }
        if last == "oss" { return labels.count >= 2 ? String(labels[labels.count - 2]) : nil }
        guard last.hasPrefix("oss-") else { return nil }
        var name = last.dropFirst("oss-".count)
        if name.hasSuffix("-internal") { name = name.dropLast("-internal".count) }
        if name.isEmpty || name == "accelerate" || name.hasPrefix("accelerate-") { return nil }
        return String(name)
    }
}
