import Foundation
import Testing

@testable import UploadStages

/// The AWS SigV4 test suite (aws-c-auth's `v4` cases): every case, both forms, byte for byte.
@Suite struct SigV4SuiteTests {
    @Test func everyCaseIsThere() {
        #expect(SuiteCase.names.count == 38)
    }

    @Test(arguments: SuiteCase.names)
    func headerForm(_ name: String) throws {
        let suite = try SuiteCase(name)
        let (headers, signing) = suite.signer.signHeaders(
            suite.request, payloadHash: suite.payloadHash, date: suite.date)
        let expected = try suite.expectedSigning(form: "header")
        #expect(signing.canonicalRequest == expected.canonicalRequest)
        #expect(signing.stringToSign == expected.stringToSign)
        #expect(signing.signature == expected.signature)
        let signedRequest = try suite.expectedSignedRequest(form: "header")
        #expect(headerValue("Authorization", in: headers) == headerValue("Authorization", in: signedRequest.headers))
    }

    @Test(arguments: SuiteCase.names)
    func queryForm(_ name: String) throws {
        let suite = try SuiteCase(name)
        let (query, signing) = suite.signer.presignQuery(
            suite.request, expires: suite.expires, payloadHash: suite.payloadHash, date: suite.date)
        let expected = try suite.expectedSigning(form: "query")
        #expect(signing.canonicalRequest == expected.canonicalRequest)
        #expect(signing.stringToSign == expected.stringToSign)
        #expect(signing.signature == expected.signature)
        // The suite appends a token it did not sign (`omit_session_token`) after signing; we never do.
        let expectedQuery = try suite.expectedSignedRequest(form: "query").query.split(separator: "&")
            .filter { !(suite.omitsSessionToken && $0.hasPrefix("X-Amz-Security-Token=")) }
        #expect(Set(query.split(separator: "&")) == Set(expectedQuery))
    }

    /// The URL-based API over cases whose request a `URL` can hold as is, with `Host` taken from the URL.
    @Test(arguments: [
        "get-vanilla", "get-vanilla-query-order-key-case", "get-vanilla-query-unreserved", "get-unreserved",
        "get-vanilla-with-session-token", "post-x-www-form-urlencoded",
    ])
    func urlForm(_ name: String) throws {
        let suite = try SuiteCase(name)
        let host = try #require(headerValue("Host", in: suite.request.headers))
        let query = suite.request.query.isEmpty ? "" : "?" + suite.request.query
        let url = try #require(URL(string: "https://\(host)\(suite.request.path)\(query)"))
        let headers = suite.request.headers.filter { $0.0 != "Host" }

        let signedHeaders = suite.signer.sign(
            method: suite.request.method, url: url, headers: headers, payloadHash: suite.payloadHash, date: suite.date)
        let expectedHeaders = try suite.expectedSignedRequest(form: "header").headers
        #expect(headerValue("Authorization", in: signedHeaders) == headerValue("Authorization", in: expectedHeaders))

        let presigned = try #require(
            suite.signer.presign(
                method: suite.request.method, url: url, headers: headers, expires: suite.expires, date: suite.date,
                payloadHash: suite.payloadHash))
        let expectedQuery = try suite.expectedSignedRequest(form: "query").query
        let presignedQuery = presigned.query(percentEncoded: true) ?? ""
        #expect(Set(presignedQuery.split(separator: "&")) == Set(expectedQuery.split(separator: "&")))
        #expect(presigned.path(percentEncoded: true) == url.path(percentEncoded: true))
    }
}

/// The signer's own rules, where the suite says nothing.
@Suite struct SigV4Tests {
    @Test func amzDateIsUTCWithoutFractions() {
        #expect(SigningTime(Date(timeIntervalSince1970: 1_700_000_000.75)).amzDate == "20231114T221320Z")
        #expect(SigningTime(Date(timeIntervalSince1970: 0)).amzDate == "19700101T000000Z")
        #expect(SigningTime(Date(timeIntervalSince1970: 0)).day == "19700101")
    }

    @Test func hostHeaderHasAPortOnlyWhenNotTheDefault() throws {
        #expect(try #require(URL(string: "http://127.0.0.1:9000/bucket/key")).hostHeader == "127.0.0.1:9000")
        #expect(try #require(URL(string: "https://s3.amazonaws.com:443/bucket")).hostHeader == "s3.amazonaws.com")
        #expect(try #require(URL(string: "http://[::1]:8080/")).hostHeader == "[::1]:8080")
    }

    @Test func uriEncodingKeepsOnlyUnreservedCharacters() {
        #expect(URIEncoding.encode("a b+c~é/*".utf8) == "a%20b%2Bc~%C3%A9%2F%2A")
        #expect(URIEncoding.encode("/a b/".utf8, keepingSlashes: true) == "/a%20b/")
        #expect(URIEncoding.reencode("%7e%e1%88%b4+%zz%".utf8) == "~%E1%88%B4%2B%25zz%25")
    }

    @Test func s3SignsThePathAsSentOtherServicesNormalizeAndEncodeAgain() {
        let keys = AWSCredentials(accessKeyId: "AKID", secretAccessKey: "secret")
        let standard = SigV4Signer(credentials: keys, region: "us-east-1", service: "service")
        #expect(standard.canonicalPath("/a%20b//./c/../d/") == "/a%2520b/d/")
        #expect(standard.canonicalPath("") == "/")
        let s3 = SigV4Signer.s3(credentials: keys, region: "us-east-1")
        #expect(s3.canonicalPath("/b/a%20b//../c") == "/b/a%20b//../c")
    }

    @Test func queryParametersSortByEncodedNameThenValue() {
        #expect(SigV4Signer.canonicalQuery("uploads") == "uploads=")
        #expect(SigV4Signer.canonicalQuery("b=2&a=2&a=1&&c") == "a=1&a=2&b=2&c=")
        #expect(SigV4Signer.canonicalQuery("uploadId=x%2By+z") == "uploadId=x%2By%2Bz")
    }

    @Test func headerFormReplacesHeadersItSets() throws {
        let signer = SigV4Signer.s3(
            credentials: AWSCredentials(accessKeyId: "AKID", secretAccessKey: "secret", sessionToken: "token"),
            region: "us-east-1")
        let url = try #require(URL(string: "https://bucket.s3.amazonaws.com/key"))
        let stale = [("X-Amz-Date", "19990101T000000Z"), ("authorization", "stale"), ("X-AMZ-SECURITY-TOKEN", "old")]
        let fresh = signer.sign(
            method: "GET", url: url, headers: stale, payloadHash: SigV4Signer.unsignedPayload,
            date: Date(timeIntervalSince1970: 0))
        #expect(fresh.map(\.0) == ["X-Amz-Date", "X-Amz-Security-Token", "x-amz-content-sha256", "Authorization"])
        let request = WireRequest(method: "GET", url: url, headers: stale)
        let canonical = signer.signHeaders(request, payloadHash: SigV4Signer.unsignedPayload, date: .now)
            .signing.canonicalRequest
        #expect(!canonical.contains("19990101") && !canonical.contains("stale") && !canonical.contains(":old"))
    }

    @Test func credentialsHideTheirSecrets() {
        let credentials = AWSCredentials(accessKeyId: "AKID", secretAccessKey: "s3cr3t", sessionToken: "t0k3n")
        #expect("\(credentials)".contains("AKID"))
        #expect(!"\(credentials)".contains("s3cr3t") && !"\(credentials)".contains("t0k3n"))
    }
}

/// botocore's signer as a second opinion, on requests like the ones s3.upload makes.
@Suite struct BotocoreAgreementTests {
    @Test(
        .enabled(if: Botocore.isAvailable, "needs python3 with botocore (pip install botocore)"),
        arguments: SignerExample.all)
    func sameHeadersAndPresignedURLAsBotocore(_ example: SignerExample) throws {
        let url = try #require(URL(string: example.url))
        let reference = try Botocore.sign(example)

        let added = example.signer.sign(
            method: example.method, url: url, headers: example.headers, payloadHash: example.payloadHash,
            date: SignerExample.date)
        #expect(lowercasedNames(example.headers + added) == lowercasedNames(reference.headers.map { ($0, $1) }))

        let presigned = try #require(
            example.signer.presign(
                method: example.method, url: url, headers: example.headers, expires: SignerExample.expires,
                date: SignerExample.date,
                payloadHash: example.signer.service == "s3" ? SigV4Signer.unsignedPayload : example.payloadHash))
        let referenceURL = try #require(URLComponents(string: reference.presignedUrl))
        let ours = try #require(URLComponents(url: presigned, resolvingAgainstBaseURL: false))
        #expect(ours.host == referenceURL.host && ours.port == referenceURL.port)
        #expect(ours.percentEncodedPath == referenceURL.percentEncodedPath)
        // botocore rebuilds the whole query (`?uploads` becomes `?uploads=`); compare what it means.
        #expect(sortedParameters(ours) == sortedParameters(referenceURL))
    }

    private func lowercasedNames(_ headers: [(String, String)]) -> [String: String] {
        Dictionary(headers.map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { "\($0),\($1)" })
    }

    private func sortedParameters(_ components: URLComponents) -> [String] {
        (components.queryItems ?? []).map { "\($0.name)=\($0.value ?? "")" }.sorted()
    }
}

// MARK: - The suite's files

/// One case folder of the suite: its request, its context, and the files it expects.
struct SuiteCase {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appending(path: "Fixtures/aws-sigv4-v4")

    /// The case folders (those with a `context.json`), sorted.
    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { FileManager.default.fileExists(atPath: folder.appending(path: "\($0)/context.json").path) }
        .sorted()

    let name: String
    let signer: SigV4Signer
    let request: WireRequest
    let payloadHash: String
    let date: Date
    let expires: Int
    /// Whether the case leaves the session token out of the signature (it is sent after signing).
    let omitsSessionToken: Bool

    init(_ name: String) throws {
        let context = try SuiteContext.decode(Data(contentsOf: Self.folder.appending(path: "\(name)/context.json")))
        let (request, body) = try Self.parseRequest(Self.read(name, "request.txt"))
        let omitsSessionToken = context.omitSessionToken ?? false
        self.name = name
        self.signer = SigV4Signer(
            credentials: AWSCredentials(
                accessKeyId: context.credentials.accessKeyId, secretAccessKey: context.credentials.secretAccessKey,
                sessionToken: omitsSessionToken ? nil : context.credentials.token),
            region: context.region, service: context.service, normalizesPath: context.normalize,
            signsContentHash: context.signBody)
        self.request = request
        // `sign_body` false does not mean UNSIGNED-PAYLOAD: the expected files still hash the (empty) body.
        self.payloadHash = SigV4Signer.payloadHash(of: body)
        self.date = try Date(context.timestamp, strategy: .iso8601)
        self.expires = context.expirationInSeconds
        self.omitsSessionToken = omitsSessionToken
    }

    /// The canonical request, string to sign and signature the suite expects for `form` (`header`, `query`).
    func expectedSigning(form: String) throws -> Signing {
        Signing(
            canonicalRequest: try Self.read(name, "\(form)-canonical-request.txt"),
            stringToSign: try Self.read(name, "\(form)-string-to-sign.txt"),
            signature: try Self.read(name, "\(form)-signature.txt"))
    }

    /// The request as the suite sends it after signing in `form`.
    func expectedSignedRequest(form: String) throws -> WireRequest {
        try Self.parseRequest(Self.read(name, "\(form)-signed-request.txt")).request
    }

    private static func read(_ name: String, _ file: String) throws -> String {
        try String(contentsOf: folder.appending(path: "\(name)/\(file)"), encoding: .utf8)
    }

    /// Reads a raw HTTP/1.1 request the way a server would, keeping the target exactly as written: it may hold
    /// spaces, `..`, `//` and raw UTF-8, which `URL` would reject or rewrite. A folded header line continues
    /// the previous value after one space.
    static func parseRequest(_ text: String) throws -> (request: WireRequest, body: Data) {
        let head = text.components(separatedBy: "\n\n").first ?? ""
        let body = text.dropFirst(head.count + 2)
        let lines = head.split(separator: "\n")
        guard let requestLine = lines.first, let firstSpace = requestLine.firstIndex(of: " "),
            let lastSpace = requestLine.lastIndex(of: " "), firstSpace < lastSpace
        else { throw SuiteFormatError(line: String(lines.first ?? "")) }
        let target = requestLine[requestLine.index(after: firstSpace)..<lastSpace]
        let path = target.prefix { $0 != "?" }

        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            if line.first?.isWhitespace == true, let last = headers.indices.last {
                headers[last].1 += " " + line
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
            } else {
                throw SuiteFormatError(line: String(line))
            }
        }
        let request = WireRequest(
            method: String(requestLine[..<firstSpace]), path: String(path),
            query: String(target.dropFirst(path.count + 1)), headers: headers)
        return (request, Data(body.utf8))
    }
}

/// A case's `context.json`.
struct SuiteContext: Decodable {
    struct Credentials: Decodable {
        var accessKeyId: String
        var secretAccessKey: String
        var token: String?
    }

    var credentials: Credentials
    var expirationInSeconds: Int
    var normalize: Bool
    var region: String
    var service: String
    var signBody: Bool
    var timestamp: String
    var omitSessionToken: Bool?

    static func decode(_ data: Data) throws -> SuiteContext {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(SuiteContext.self, from: data)
    }
}

struct SuiteFormatError: Error, CustomStringConvertible {
    var line: String
    var description: String { "unreadable line in a suite request: \(line)" }
}

/// The value of the first header named `name`, any case.
private func headerValue(_ name: String, in headers: [(String, String)]) -> String? {
    headers.first { $0.0.lowercased() == name.lowercased() }?.1
}

// MARK: - botocore

/// A request to sign with both signers.
struct SignerExample: Sendable, CustomTestStringConvertible {
    var testDescription: String
    var signer: SigV4Signer
    var method: String
    var url: String
    var headers: [(String, String)] = []
    var payloadHash: String

    static let date = Date(timeIntervalSince1970: 1_700_000_000.75)
    static let expires = 900

    static let all: [SignerExample] = {
        let keys = AWSCredentials(
            accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
        var temporary = keys
        temporary.sessionToken = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD+abc/def=="
        let empty = SigV4Signer.payloadHash(of: Data())
        return [
            SignerExample(
                testDescription: "PUT part with partNumber and uploadId",
                signer: .s3(credentials: keys, region: "us-east-1"), method: "PUT",
                url: "https://media-bucket.s3.us-east-1.amazonaws.com/videos/clip.mp4"
                    + "?partNumber=3&uploadId=VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA--",
                headers: [("Content-Length", "10")], payloadHash: SigV4Signer.payloadHash(of: Data("part three".utf8))),
            SignerExample(
                testDescription: "POST ?uploads, path style on a custom port",
                signer: .s3(credentials: keys, region: "us-east-1"), method: "POST",
                url: "http://127.0.0.1:5000/media-bucket/exports/launch.mp4?uploads",
                headers: [("Content-Type", "video/mp4"), ("x-amz-meta-title", "  Launch   day ")], payloadHash: empty),
            SignerExample(
                testDescription: "key with spaces and unicode",
                signer: .s3(credentials: keys, region: "eu-west-1"), method: "PUT",
                url: "https://media-bucket.s3.eu-west-1.amazonaws.com"
                    + "/%E2%82%AC%20caf%C3%A9/cr%C3%A8me%20br%C3%BBl%C3%A9e.mov?partNumber=1&uploadId=abc",
                headers: [("Content-Length", "5")], payloadHash: SigV4Signer.unsignedPayload),
            SignerExample(
                testDescription: "key with + and ~, upload id with / and +, session token",
                signer: .s3(credentials: temporary, region: "us-west-2"), method: "PUT",
                url: "https://media-bucket.s3.us-west-2.amazonaws.com"
                    + "/a%2Bb~c/d%21e.mp4?partNumber=10000&uploadId=2~Xy%2Fz%2B",
                headers: [("Content-Length", "1"), ("Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg==")],
                payloadHash: SigV4Signer.unsignedPayload),
            SignerExample(
                testDescription: "POST complete multipart upload, session token",
                signer: .s3(credentials: temporary, region: "us-east-1"), method: "POST",
                url: "https://media-bucket.s3.amazonaws.com/videos/clip.mp4?uploadId=VXBs",
                headers: [("Content-Type", "application/xml")],
                payloadHash: SigV4Signer.payloadHash(of: Data("<CompleteMultipartUpload/>".utf8))),
            SignerExample(
                testDescription: "another service: normalized, double-encoded path",
                signer: SigV4Signer(credentials: keys, region: "us-east-1", service: "execute-api"), method: "GET",
                url: "https://api.example.amazonaws.com/stage/a%20b/./c//d/?b=2&a=1&empty",
                headers: [("X-Custom", "x   y")], payloadHash: empty),
        ]
    }()
}

/// botocore's signer, through `botocore_sign.py`.
enum Botocore {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "botocore_sign.py")

    static let isAvailable = (try? python(["-c", "import botocore"], input: Data())) != nil

    /// What botocore made of a request: the headers after header-form signing, and the presigned URL.
    struct Reference: Decodable {
        var headers: [String: String]
        var presignedUrl: String
    }

    static func sign(_ example: SignerExample) throws -> Reference {
        let spec: [String: Any] = [
            "method": example.method, "url": example.url, "headers": example.headers.map { [$0.0, $0.1] },
            "payload_hash": example.payloadHash, "access_key_id": example.signer.credentials.accessKeyId,
            "secret_access_key": example.signer.credentials.secretAccessKey,
            "session_token": example.signer.credentials.sessionToken ?? NSNull(),
            "region": example.signer.region, "service": example.signer.service,
            "s3": example.signer.service == "s3", "timestamp": SignerExample.date.timeIntervalSince1970,
            "expires": SignerExample.expires,
        ]
        let output = try python([script.path], input: JSONSerialization.data(withJSONObject: spec))
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(Reference.self, from: output)
    }

    /// Runs `python3` with `arguments`, feeding `input`; throws with its stderr unless it exits 0.
    static func python(_ arguments: [String], input: Data) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let (stdin, stdout, stderr) = (Pipe(), Pipe(), Pipe())
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BotocoreFailure(status: process.terminationStatus, stderr: String(decoding: errors, as: UTF8.self))
        }
        return output
    }
}

struct BotocoreFailure: Error, CustomStringConvertible {
    var status: Int32
    var stderr: String
    var description: String { "python3 exited with \(status): \(stderr)" }
}
