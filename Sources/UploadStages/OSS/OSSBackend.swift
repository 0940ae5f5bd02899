import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTransport
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import StageKit
import StageRuntime

/// OSS as the storage of a multipart upload.
struct OSSBackend: MultipartBackend {
    let options: OSSUploadStage.Options
    let file: UploadFile
    let context: StageContext
    let exchange: HTTPExchange
    let signer: OSSSigner
    let objectURL: String
    /// When the credential must be renewed (its expiration less `renewBefore`); nil when unknown.
    let renewAt: Date?

    init(options: OSSUploadStage.Options, file: UploadFile, context: StageContext) throws {
        self.options = options
        self.file = file
        self.context = context
        signer = OSSSigner(credentials: try options.credentials.accessKey(), version: Self.signatureVersion(options))
        let stall = options.stallTimeout
        exchange = HTTPExchange(
            client: context.httpClient, stallTimeout: stall, answerTimeout: TimeSpan(seconds: max(300, stall.seconds)))
        objectURL = try Self.objectURL(options)
        if let expiration = options.expiration, !expiration.isEmpty {
            guard let date = ISO8601DateFormatter().date(from: expiration) else {
                throw StageFailure("expiration must be an ISO 8601 time, not \(expiration)", kind: .invalidOptions)
            }
            // A credential issued for less than renewBefore is used until it expires, not renewed at once.
            let early = date.addingTimeInterval(-options.renewBefore.seconds)
            renewAt = early > Date() ? early : date
        } else {
            renewAt = nil
        }
    }

    /// The signature `options` ask for; V4's region is the option's, else the endpoint's (``Options/problems(in:)``
    /// refuses options with neither before the stage runs).
    static func signatureVersion(_ options: OSSUploadStage.Options) -> OSSSignatureVersion {
        switch options.signatureVersion {
        case .v1: .v1
        case .v4:
            .v4(
                region: options.region.flatMap { $0.isEmpty ? nil : $0 } ?? OSSSigner.region(
                    ofEndpoint: options.endpoint) ?? "")
        }
    }

    /// InitiateMultipartUpload.
    func create() async throws -> (uploadId: String, key: String) {
        let headers = [("Content-Type", options.contentType ?? MediaType.guess(for: options.key))]
        let action = "starting the multipart upload"
        let answer = try await send("POST", query: [("uploads", nil)], headers: headers, doing: action)
        guard answer.status == .ok else { throw HTTPFailure.oss(answer, doing: action) }
        guard let xml = S3XML(Data(buffer: answer.body)), let uploadId = xml.first("UploadId"), !uploadId.isEmpty else {
            throw HTTPFailure.invalidAnswer(answer, "\(action): the answer has no UploadId (\(answer.bodyExcerpt))")
        }
        return (uploadId, options.key)
    }

    /// ListParts, page by page; nil when the upload is gone (`NoSuchUpload`).
    func listParts(uploadId: String, key: String) async throws -> [Int: ListedPart]? {
        var parts: [Int: ListedPart] = [:]
        var marker = 0
        while true {
            let answer = try await send(
                "GET", query: [("max-parts", "1000"), ("part-number-marker", String(marker)), ("uploadId", uploadId)],
                doing: "listing the uploaded parts")
            if answer.status == .notFound { return nil }
            guard answer.status == .ok, let xml = S3XML(Data(buffer: answer.body)) else {
                throw HTTPFailure.oss(answer, doing: "listing the uploaded parts")
            }
            guard let next = ListedPart.read(page: xml, into: &parts) else { return parts }
            marker = next
        }
    }

    /// A listed part this run has no record of (sent just before a crash): kept when its ETag is the MD5 of
    /// the file's range, so it is not sent again.
    func adopt(number: Int, listed: ListedPart, range: Range<Int64>) async throws -> UploadedPart? {
        var digest = Insecure.MD5()
        try await file.digest(range) { digest.update(bufferPointer: $0) }
        let md5 = HexDigest.text(Array(digest.finalize()))
        let etag = listed.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        return etag.caseInsensitiveCompare(md5) == .orderedSame ? UploadedPart(number: number, etag: listed.etag) : nil
    }

    /// UploadPart; the part's MD5 comes back as its ETag.
    func sendPart(uploadId: String, key: String, number: Int, range: Range<Int64>, meter: TransferMeter) async throws
        -> UploadedPart
    {
        let action = "uploading part \(number)"
        let answer = try await send(
            "PUT", query: [("partNumber", String(number)), ("uploadId", uploadId)], stream: (range, meter),
            doing: action)
        guard answer.status == .ok else { throw HTTPFailure.oss(answer, doing: action) }
        guard let etag = answer.headers.first(name: "ETag") else {
            throw HTTPFailure.invalidAnswer(answer, "\(action): the answer has no ETag")
        }
        return UploadedPart(number: number, etag: etag)
    }

    /// CompleteMultipartUpload with every part's number and ETag.
    func complete(uploadId: String, key: String, parts: [UploadedPart]) async throws -> CompletedUpload {
        var body = "<CompleteMultipartUpload>"
        for part in parts {
            body += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(xmlEscaped(part.etag))</ETag></Part>"
        }
        body += "</CompleteMultipartUpload>"
        let action = "completing the multipart upload"
        let answer = try await send(
            "POST", query: [("uploadId", uploadId)], headers: [("Content-Type", "application/xml")],
            body: Data(body.utf8), doing: action)
        if answer.status == .ok, let xml = S3XML(Data(buffer: answer.body)), xml.root != "Error",
            let etag = xml.first("ETag")
        {
            return CompletedUpload(etag: etag, location: xml.first("Location") ?? objectURL)
        }
        throw HTTPFailure.oss(answer, doing: action)
    }

    /// AbortMultipartUpload; failures are only logged.
    func abort(uploadId: String, key: String) async {
        let answer = try? await send("DELETE", query: [("uploadId", uploadId)], doing: "aborting")
        context.logger.info(
            "aborted multipart upload \(uploadId) (\(answer.map { String($0.status.code) } ?? "no answer"))")
    }

    /// HEAD of the object: there, with the file's size, after a completion whose answer was lost. A 403 (a
    /// credential that may only write, as VOD's upload credentials may be) throws ``UnreadableObject``.
    func existingObject(key: String, size: Int64) async throws -> CompletedUpload? {
        let head = try await send("HEAD", query: [], doing: "checking the object")
        if head.status == .forbidden { throw UnreadableObject(location: objectURL) }
        guard head.status == .ok, head.integer("Content-Length") == size else { return nil }
        return CompletedUpload(etag: head.headers.first(name: "ETag") ?? "", location: objectURL)
    }

    // MARK: Requests

    /// Sends a signed request with a small body in memory, or a file range streamed. A credential about to
    /// expire is renewed first (the failure asks the runner for it), rather than failing mid-part.
    private func send(
        _ method: String, query: [(String, String?)], headers: [(String, String)] = [], body: Data = Data(),
        stream: (Range<Int64>, TransferMeter)? = nil, doing action: String
    ) async throws -> HTTPAnswer {
        if let renewAt, Date() >= renewAt {
            throw HTTPFailure(
                .notAuthenticated,
                message:
                    "\(action): the temporary credential expires at \(options.expiration ?? "?"): renewing it first")
        }
        let queryText = query.map { name, value in
            value.map { "\(Self.encode(name))=\(Self.encode($0))" } ?? Self.encode(name)
        }.joined(separator: "&")
        let urlText = objectURL + (queryText.isEmpty ? "" : "?" + queryText)
        let length = stream.map { Int64($0.0.count) } ?? Int64(body.count)
        var allHeaders = headers
        if method == "PUT" || method == "POST" { allHeaders.append(("Content-Length", String(length))) }
        let signed = signer.sign(
            method: method, bucket: options.bucket, key: options.key, query: query, headers: allHeaders, date: Date())
        var request = HTTPClientRequest(
            url: urlText, method: HTTPMethod(rawValue: method), headers: allHeaders + signed)
        if let (range, meter) = stream {
            return try await exchange.send(
                request, streaming: file.body(range, for: request), length: length, meter: meter, doing: action)
        }
        if !body.isEmpty { request.body = .bytes(ByteBuffer(data: body)) }
        return try await exchange.send(request, doing: action)
    }

    /// The object's URL: `endpoint/bucket/key` (path style) or `bucket.endpoint-host/key`.
    static func objectURL(_ options: OSSUploadStage.Options) throws -> String {
        let endpoint = options.endpoint.contains("://") ? options.endpoint : "https://" + options.endpoint
        guard var components = URLComponents(string: endpoint), let host = components.host else {
            throw StageFailure("invalid endpoint \(options.endpoint)", kind: .invalidOptions)
        }
        let isAddress =
            host == "localhost" || host.contains(":") || host.split(separator: ".").allSatisfy { UInt8($0) != nil }
        let key = encode(options.key, keepingSlashes: true)
        if options.pathStyle ?? isAddress {
            components.percentEncodedPath = "/" + encode(options.bucket) + "/" + key
        } else {
            components.host = "\(options.bucket).\(host)"
            components.percentEncodedPath = "/" + key
        }
        guard let url = components.string else {
            throw StageFailure("invalid OSS URL for \(options.bucket)/\(options.key)", kind: .invalidOptions)
        }
        return url
    }

    /// Percent-encodes every byte but `A-Z a-z 0-9 - . _ ~` (and `/` when asked).
    static func encode(_ text: String, keepingSlashes: Bool = false) -> String {
        S3Backend.encode(text, keepingSlashes: keepingSlashes)
    }
}

extension HTTPFailure {
    /// The failure for an OSS answer that is not the one asked for: its XML `Code` refines the status
    /// through Alibaba Cloud's one table (``HTTPFailure/aliyun(_:code:said:doing:)``).
    static func oss(_ answer: HTTPAnswer, doing action: String) -> HTTPFailure {
        let xml = S3XML(Data(buffer: answer.body))
        let code = xml?.first("Code") ?? ""
        let said = [xml?.first("Code"), xml?.first("Message")].compactMap { $0 }.joined(separator: ": ")
        return HTTPFailure.aliyun(answer, code: code, said: said, doing: action)
    }
}
