/// A request as SigV4 reads it: its pieces exactly as they go on the wire. The signer works on these
/// rather than on `URL`, which rejects or rewrites some paths a request may carry (spaces, `..`, `//`).
struct WireRequest: Sendable {
    /// The HTTP method, e.g. `PUT`.
    var method: String
    /// The percent-encoded path, as sent.
    var path: String
    /// The query without its `?`, as sent; empty when there is none.
    var query: String
    /// The headers in the order given; a name may repeat.
    var headers: [(String, String)]
}

extension SigV4Signer {
    /// The canonical request: method, path, query, header lines, signed header names and payload hash.
    func canonicalRequest(_ request: WireRequest, payloadHash: String) -> String {
        let headers = CanonicalHeaders(request.headers)
        return [
            request.method, canonicalPath(request.path), Self.canonicalQuery(request.query), headers.lines,
            headers.signedNames, payloadHash,
        ].joined(separator: "\n")
    }

    /// The path as signed. Every service but S3 percent-encodes the wire path once more (so `%20` signs as
    /// `%2520`), because their servers do the same with the path they receive; S3 signs the wire path as is.
    func canonicalPath(_ path: String) -> String {
        let path = normalizesPath ? Self.removingDotSegments(path) : path
        let signed = doubleEncodesPath ? URIEncoding.encode(path.utf8, keepingSlashes: true) : path
        return signed.isEmpty ? "/" : signed
    }

    /// RFC 3986 dot-segment removal, plus the collapse of empty segments (`//`) that AWS adds. A trailing
    /// slash stays, as botocore keeps it.
    static func removingDotSegments(_ path: String) -> String {
        var segments: [Substring.UTF8View] = []
        for segment in path.utf8.split(separator: UInt8(ascii: "/")) where !segment.elementsEqual(".".utf8) {
            if segment.elementsEqual("..".utf8) {
                _ = segments.popLast()
            } else {
                segments.append(segment)
            }
        }
        let trailingSlash = path.hasSuffix("/") && !segments.isEmpty ? "/" : ""
        return "/" + segments.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "/") + trailingSlash
    }

    /// The query as signed: each name and value decoded and encoded again, `name=value` even when the wire
    /// had no `=` (`?uploads`), sorted by encoded name then value.
    static func canonicalQuery(_ query: String) -> String {
        query.utf8.split(separator: UInt8(ascii: "&"))
            .map { pair in
                let name = pair.prefix { $0 != UInt8(ascii: "=") }
                return (URIEncoding.reencode(name), URIEncoding.reencode(pair.dropFirst(name.count + 1)))
            }
            .sorted { $0 < $1 }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }
}

/// The header part of a canonical request.
struct CanonicalHeaders {
    /// One `name:value` line per lowercase name, sorted by name, each ending in a newline. A repeated name
    /// joins its values with `,` in the order given.
    let lines: String
    /// The sorted lowercase names, joined by `;`.
    let signedNames: String

    init(_ headers: [(String, String)]) {
        var valuesByName: [String: [String]] = [:]
        for (name, value) in headers {
            let name = name.lowercased()
            guard !Self.unsignedNames.contains(name) else { continue }
            valuesByName[name, default: []].append(Self.trimmingAll(value))
        }
        let names = valuesByName.keys.sorted()
        lines = names.map { "\($0):\(valuesByName[$0, default: []].joined(separator: ","))\n" }.joined()
        signedNames = names.joined(separator: ";")
    }

    /// Headers that proxies and HTTP clients add, drop or rewrite on the way, so a signature over them would
    /// break in transit; botocore leaves the same ones unsigned.
    static let unsignedNames: Set<String> = [
        "connection", "expect", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
        "transfer-encoding", "upgrade", "user-agent", "x-amzn-trace-id",
    ]

    /// SigV4's `Trimall`: no whitespace at either end, and each inner run of it (folded lines too) one space.
    static func trimmingAll(_ value: String) -> String {
        value.utf8.split { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
            .map { String(decoding: $0, as: UTF8.self) }
            .joined(separator: " ")
    }
}
