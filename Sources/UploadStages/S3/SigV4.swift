import Crypto
public import Foundation
import StageKit

/// The credentials a request is signed with: long-term keys, or temporary ones with a session token.
public struct AWSCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The access key id, e.g. `AKIDEXAMPLE`; it travels in clear in every signature.
    public var accessKeyId: String
    /// The secret the signing keys derive from; it never travels.
    public var secretAccessKey: String
    /// The session token of temporary credentials (STS), sent as `X-Amz-Security-Token`.
    public var sessionToken: String?

    /// Credentials from their parts; `sessionToken` only for temporary credentials.
    public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The access key id only: credentials end up in logs through interpolation, secrets must not.
    public var description: String {
        "AWSCredentials(accessKeyId: \(accessKeyId), secretAccessKey: <redacted>"
            + (sessionToken == nil ? ")" : ", sessionToken: <redacted>)")
    }
}

/// Signs HTTP requests with AWS Signature Version 4, either with an `Authorization` header or as a
/// presigned URL. A value with no state: sign from any task.
public struct SigV4Signer: Sendable {
    /// Whose request it is.
    public let credentials: AWSCredentials
    /// The region of the endpoint, e.g. `us-east-1`.
    public let region: String
    /// The service's signing name, e.g. `s3`.
    public let service: String
    /// Whether `.`, `..` and empty segments are resolved before the path is signed (not for S3).
    public let normalizesPath: Bool
    /// Whether the already percent-encoded path is encoded once more before signing (not for S3).
    public let doubleEncodesPath: Bool
    /// Whether the header form adds and signs `x-amz-content-sha256` (S3 requires it).
    public let signsContentHash: Bool

    /// A signer for `service` in `region`. The defaults suit every service but S3; use ``s3(credentials:region:)``
    /// for S3.
    public init(
        credentials: AWSCredentials, region: String, service: String, normalizesPath: Bool = true,
        doubleEncodesPath: Bool = true, signsContentHash: Bool = false
    ) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.normalizesPath = normalizesPath
        self.doubleEncodesPath = doubleEncodesPath
        self.signsContentHash = signsContentHash
    }

    /// A signer as S3 expects it: the path signed as it is sent, since object keys may hold `//` or `..`,
    /// and the payload hash sent in `x-amz-content-sha256`. Spell object keys in URLs the way S3 does, every
    /// byte but `A-Z a-z 0-9 - . _ ~ /` percent-encoded, or S3 computes a different signature.
    public static func s3(credentials: AWSCredentials, region: String) -> SigV4Signer {
        SigV4Signer(
            credentials: credentials, region: region, service: "s3", normalizesPath: false,
            doubleEncodesPath: false, signsContentHash: true)
    }

    /// The payload hash that leaves the body unsigned: S3 accepts it, and presigned URLs use it.
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// The payload hash of `body`: its SHA-256, in lowercase hex.
    public static func payloadHash(of body: some DataProtocol) -> String {
        HexDigest.text(SHA256.hash(data: body))
    }

    /// Signs a request in the header form and returns the headers to set on it, replacing any of the same
    /// name: `X-Amz-Date`, `X-Amz-Security-Token` with a session token, `x-amz-content-sha256` when
    /// ``signsContentHash``, and `Authorization`.
    ///
    /// - Parameters:
    ///   - url: the URL the request goes to, exactly as it will be sent; its host (and port, unless the
    ///     scheme's default) is signed as `Host` unless `headers` has one.
    ///   - headers: the headers the request will carry, all of them signed except hop-by-hop ones.
    ///   - payloadHash: ``payloadHash(of:)`` of the body, or ``unsignedPayload``.
    ///   - date: the signing time; AWS rejects signatures more than 15 minutes off its clock.
    public func sign(
        method: String, url: URL, headers: [(String, String)] = [], payloadHash: String, date: Date
    ) -> [(String, String)] {
        signHeaders(WireRequest(method: method, url: url, headers: headers), payloadHash: payloadHash, date: date)
            .headers
    }

    /// Signs a request in the query form: `url` with the `X-Amz-*` parameters appended, valid for `expires`
    /// seconds (S3 allows up to 604800, 7 days). The request must then carry exactly `headers`.
    /// Returns nil only if Foundation cannot form a URL from `url` and the signed query.
    public func presign(
        method: String, url: URL, headers: [(String, String)] = [], expires: Int, date: Date,
        payloadHash: String = SigV4Signer.unsignedPayload
    ) -> URL? {
        let request = WireRequest(method: method, url: url, headers: headers)
        var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        components?.percentEncodedQuery =
            presignQuery(request, expires: expires, payloadHash: payloadHash, date: date).query
        return components?.url
    }
}

/// What one signing derives, step by step.
struct Signing: Sendable, Equatable {
    /// The request in SigV4's canonical form.
    var canonicalRequest: String
    /// The algorithm, time, scope and canonical request hash that the signature covers.
    var stringToSign: String
    /// The signature, in lowercase hex.
    var signature: String
}

extension SigV4Signer {
    static let algorithm = "AWS4-HMAC-SHA256"

    /// The header form over wire pieces: the headers to set, and the signing behind them.
    func signHeaders(_ request: WireRequest, payloadHash: String, date: Date) -> (
        headers: [(String, String)], signing: Signing
    ) {
        let time = SigningTime(date)
        var added = [("X-Amz-Date", time.amzDate)]
        if let token = credentials.sessionToken {
            added.append(("X-Amz-Security-Token", token))
        }
        if signsContentHash {
            added.append(("x-amz-content-sha256", payloadHash))
        }
        let replaced = Set(added.map { $0.0.lowercased() } + ["authorization"])
        var signed = request
        signed.headers = request.headers.filter { !replaced.contains($0.0.lowercased()) } + added
        let result = signing(for: signed, payloadHash: payloadHash, time: time)
        let authorization =
            "\(Self.algorithm) Credential=\(credential(time)), "
            + "SignedHeaders=\(CanonicalHeaders(signed.headers).signedNames), Signature=\(result.signature)"
        return (added + [("Authorization", authorization)], result)
    }

    /// The query form over wire pieces: the query to send (the request's own parameters, then the signed
    /// `X-Amz-*` ones, then `X-Amz-Signature`), and the signing behind it.
    func presignQuery(_ request: WireRequest, expires: Int, payloadHash: String, date: Date) -> (
        query: String, signing: Signing
    ) {
        let time = SigningTime(date)
        var parameters = [
            ("X-Amz-Algorithm", Self.algorithm), ("X-Amz-Credential", credential(time)),
            ("X-Amz-Date", time.amzDate), ("X-Amz-Expires", String(expires)),
        ]
        if let token = credentials.sessionToken {
            parameters.append(("X-Amz-Security-Token", token))
        }
        parameters.append(("X-Amz-SignedHeaders", CanonicalHeaders(request.headers).signedNames))
        var signed = request
        signed.query = ([request.query] + parameters.map { "\($0)=\(URIEncoding.encode($1.utf8))" })
            .filter { !$0.isEmpty }
            .joined(separator: "&")
        let result = signing(for: signed, payloadHash: payloadHash, time: time)
        return (signed.query + "&X-Amz-Signature=" + result.signature, result)
    }

    /// The steps both forms share, once their own additions are in `request`.
    func signing(for request: WireRequest, payloadHash: String, time: SigningTime) -> Signing {
        let canonical = canonicalRequest(request, payloadHash: payloadHash)
        let toSign = stringToSign(canonicalRequest: canonical, time: time)
        return Signing(
            canonicalRequest: canonical, stringToSign: toSign, signature: signature(stringToSign: toSign, time: time))
    }

    /// The string to sign: algorithm, time, credential scope, and the canonical request's SHA-256.
    func stringToSign(canonicalRequest: String, time: SigningTime) -> String {
        [Self.algorithm, time.amzDate, scope(time), HexDigest.text(SHA256.hash(data: Data(canonicalRequest.utf8)))]
            .joined(separator: "\n")
    }

    /// The signature: an HMAC chain from the secret through the day, region, service and `aws4_request`
    /// (the signing key), then over the string to sign.
    func signature(stringToSign: String, time: SigningTime) -> String {
        let secret = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        let signingKey = [String(time.day), region, service, "aws4_request"].reduce(secret) { key, scopePart in
            SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Data(scopePart.utf8), using: key))
        }
        return HexDigest.text(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: signingKey))
    }

    /// `day/region/service/aws4_request`.
    func scope(_ time: SigningTime) -> String {
        "\(time.day)/\(region)/\(service)/aws4_request"
    }

    /// The access key id and the scope, as `Credential=` and `X-Amz-Credential` carry them.
    func credential(_ time: SigningTime) -> String {
        "\(credentials.accessKeyId)/\(scope(time))"
    }
}

/// The time of a signing as SigV4 writes it, in UTC whatever the machine's locale and time zone.
struct SigningTime: Sendable {
    /// `yyyyMMdd'T'HHmmss'Z'`, for `X-Amz-Date`; fractions of a second are dropped.
    let amzDate: String

    /// `yyyyMMdd`, the first part of the credential scope.
    var day: Substring { amzDate.prefix(8) }

    init(_ date: Date) {
        func digits(_ component: Calendar.Component, _ width: Int) -> String {
            let value = String(Self.calendar.component(component, from: date))
            return String(repeating: "0", count: max(0, width - value.count)) + value
        }
        amzDate =
            digits(.year, 4) + digits(.month, 2) + digits(.day, 2) + "T" + digits(.hour, 2) + digits(.minute, 2)
            + digits(.second, 2) + "Z"
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        return calendar
    }()
}

extension WireRequest {
    /// The wire pieces of a request to `url`, with a `host` header from the URL unless `headers` has one.
    init(method: String, url: URL, headers: [(String, String)]) {
        let hasHost = headers.contains { $0.0.lowercased() == "host" }
        self.init(
            method: method, path: url.path(percentEncoded: true), query: url.query(percentEncoded: true) ?? "",
            headers: hasHost ? headers : [("host", url.hostHeader)] + headers)
    }
}

extension URL {
    /// The `Host` header an HTTP client sends for this URL: the port only when it isn't the scheme's default.
    var hostHeader: String {
        let name = host(percentEncoded: true) ?? ""
        let host = name.contains(":") ? "[\(name)]" : name
        let defaultPort = ["http": 80, "https": 443][scheme?.lowercased() ?? ""]
        guard let port, port != defaultPort else { return host }
        return "\(host):\(port)"
    }
}
