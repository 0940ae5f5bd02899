import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTransport
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
public import StageKit
import StageRuntime

/// `s3.upload`: S3 multipart upload with SigV4, parallel parts, a checksum per part, and resume: the
/// upload id and every finished part are checkpointed; after a crash the stage reconciles with
/// ListParts and sends only the missing parts. A fatal failure aborts the multipart upload, so no
/// incomplete upload is left behind (a signal does not: the next run resumes it).
public struct S3UploadStage: Stage {
    /// The options of `s3.upload`.
    public struct Options: StageOptions {
        /// Where the bucket is and how to send to it.
        @OptionGroup public var connection: S3Connection
        /// The object key.
        @Option("The object key.") public var key: String
        /// The file (default: the input file).
        @Option("The file (default: the input file).") public var file: String?
        /// Bytes per part (a smaller one is raised to 5 MiB; grown so there are at most 10,000 parts).
        @Option(
            "Bytes per part (a smaller one is raised to 5 MiB; grown so there are at most 10,000 parts).",
            maximum: 5_368_709_120)
        public var partSize = ByteCount(8 << 20)
        /// Parts in flight at once (memory stays at a few MiB whatever the part size).
        @Option(
            "Parts in flight at once (memory stays at a few MiB whatever the part size).", minimum: 1, maximum: 32
        )
        public var concurrency = 4
        /// Content-Type of the object (default: from the file extension).
        @Option("Content-Type of the object (default: from the file extension).") public var contentType: String?
        /// Also give a presigned GET URL of the object, valid this long.
        @Option(
            "Also give a presigned GET URL of the object (sharedURL), valid this long: for a platform that pulls the file. Anybody holding it can read the object until then, and it is kept with the outputs.",
            minimum: 1, maximum: 604_800)
        public var shareFor: TimeSpan?

        public init() {}
    }

    /// The outputs of `s3.upload`.
    public struct Outputs: StageOutputs {
        /// The object.
        @OutputGroup public var object = UploadedObject()
        /// A presigned GET URL of the object (shareFor); empty when not asked for.
        @Output("A presigned GET URL of the object, valid for shareFor; empty when not asked for.")
        public var sharedURL = ""

        public init() {}
    }

    public static let stageType = "s3.upload"
    public static let inputFileOption = "file"
    public static let landingOutput = "location"
    /// A multipart upload sends part 1, the head, last.
    public static let streamRole = StreamRole.follower
    public static let resource = StageResource.network
    /// Its requests are retried by the stage itself (resuming from the server), under the stage's `retry`.
    public static let retriesItself = true
    public static let summary =
        "Uploads a file to S3 (or a compatible store) with multipart, SigV4, parallel parts and per-part checksums; resumes after a crash."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let shareSeconds = options.shareFor.map { Int($0.seconds.rounded()) }
        if let stream = context.services[ExportStreamKey.self] {
            return try await runStreamed(options, stream: stream, shareSeconds: shareSeconds, context: context)
        }
        let file = try UploadFile(path: options.file ?? context.item.path)
        let backend = try S3Backend(options, file: file, context: context)
        let partSize = max(5 << 20, options.partSize.bytes, (file.size + 9_999) / 10_000)
        guard partSize <= 5 << 30 else {
            throw StageFailure(
                "\(ByteCount(file.size)) needs parts over 5 GiB; S3 objects are at most 5 TiB", kind: .invalidInput)
        }
        let upload = MultipartUpload(
            file: file, partSize: partSize, concurrency: options.concurrency,
            target: "s3:\(backend.objectURL) checksum=\(backend.checksum)", context: context, backend: backend)
        let (completed, _) = try await upload.run()
        return try Outputs.with {
            $0.object = UploadedObject(bucket: options.connection.bucket, key: options.key, completed, size: file.size)
            $0.sharedURL = try shareSeconds.map(backend.presignedGet) ?? ""
        }
    }
}

extension S3UploadStage {
    /// `"stream": true`: uploads the export the stage follows while it is written (``StreamedMultipartUpload``).
    /// The part size is fixed before the file's size is known: at least the option's, and large enough for an
    /// export twice the input's size in 10,000 parts.
    private func runStreamed(
        _ options: Options, stream: ExportStream, shareSeconds: Int?, context: StageContext
    ) async throws -> Outputs {
        let partSize = max(5 << 20, options.partSize.bytes, (2 * context.item.size + 9_999) / 10_000)
        let objectURL = try options.connection.objectURL(key: options.key, region: "us-east-1")
        let upload = StreamedMultipartUpload(
            stream: stream, partSize: partSize, concurrency: options.concurrency,
            target: "s3:\(objectURL) checksum=\(options.connection.checksum.rawValue) streamed", context: context,
            backend: { file in try S3Backend(options, file: file, context: context) })
        let (completed, size) = try await upload.run()
        let backend = try S3Backend(options, file: UploadFile(growing: ""), context: context)
        return try Outputs.with {
            $0.object = UploadedObject(bucket: options.connection.bucket, key: options.key, completed, size: size)
            $0.sharedURL = try shareSeconds.map(backend.presignedGet) ?? ""
        }
    }
}

/// S3 itself as the storage of a multipart upload: signed requests, XML answers.
struct S3Backend: MultipartBackend {
    let key: String
    /// The object's Content-Type.
    let contentType: String
    let file: UploadFile
    let context: StageContext
    let exchange: HTTPExchange
    let signer: SigV4Signer
    let objectURL: String
    let checksum: String

    /// The backend of object `key` in the bucket `connection` reaches (`contentType` by default: from the key's
    /// extension).
    init(
        _ connection: S3Connection, key: String, contentType: String?, file: UploadFile, context: StageContext
    ) throws {
        self.key = key
        self.contentType = contentType ?? MediaType.guess(for: key)
        self.file = file
        self.context = context
        let environment = ProcessInfo.processInfo.environment
        let region = connection.signingRegion(environment: environment)
        signer = SigV4Signer.s3(credentials: try connection.credentials(environment: environment), region: region)
        let stall = connection.stallTimeout
        exchange = HTTPExchange(
            client: context.httpClient, stallTimeout: stall, answerTimeout: TimeSpan(seconds: max(300, stall.seconds)))
        objectURL = try connection.objectURL(key: key, region: region)
        checksum = connection.checksum.rawValue
    }

    /// The backend of `s3.upload`'s object.
    init(_ options: S3UploadStage.Options, file: UploadFile, context: StageContext) throws {
        try self.init(
            options.connection, key: options.key, contentType: options.contentType, file: file, context: context)
    }

    /// A GET URL of the object that needs no credentials for `seconds` (S3 allows at most 7 days).
    func presignedGet(seconds: Int) throws -> String {
        guard let url = URL(string: objectURL),
            let signed = signer.presign(method: "GET", url: url, expires: seconds, date: Date())
        else { throw StageFailure("cannot presign \(objectURL)", kind: .invalidOptions) }
        return signed.absoluteString
    }

    /// CreateMultipartUpload.
    func create() async throws -> (uploadId: String, key: String) {
        var headers = [("Content-Type", contentType)]
        if checksum != "none" { headers.append(("x-amz-checksum-algorithm", checksum.uppercased())) }
        let answer = try await send("POST", query: "uploads", headers: headers, doing: "starting the multipart upload")
        guard answer.status == .ok else { throw HTTPFailure.s3(answer, doing: "starting the multipart upload") }
        guard let xml = S3XML(Data(buffer: answer.body)), let uploadId = xml.first("UploadId"), !uploadId.isEmpty else {
            throw HTTPFailure.invalidAnswer(
                answer, "starting the multipart upload: the answer has no UploadId (\(answer.bodyExcerpt))")
        }
        return (uploadId, key)
    }

    /// ListParts, page by page.
    func listParts(uploadId: String, key: String) async throws -> [Int: ListedPart]? {
        var parts: [Int: ListedPart] = [:]
        var marker = 0
        while true {
            let answer = try await send(
                "GET", query: "max-parts=1000&part-number-marker=\(marker)&uploadId=\(Self.encode(uploadId))",
                doing: "listing the uploaded parts")
            if answer.status == .notFound { return nil }
            guard answer.status == .ok, let xml = S3XML(Data(buffer: answer.body)) else {
                throw HTTPFailure.s3(answer, doing: "listing the uploaded parts")
            }
            guard let next = ListedPart.read(page: xml, into: &parts) else { return parts }
            marker = next
        }
    }

    /// UploadPart with its checksum; the server's ETag comes back.
    func sendPart(uploadId: String, key: String, number: Int, range: Range<Int64>, meter: TransferMeter) async throws
        -> UploadedPart
    {
        let digest = try await partChecksum(range)
        var headers: [(String, String)] = []
        if let digest { headers.append(("x-amz-checksum-\(checksum)", digest)) }
        let query = "partNumber=\(number)&uploadId=\(Self.encode(uploadId))"
        let answer = try await send(
            "PUT", query: query, headers: headers, stream: (range, meter), doing: "uploading part \(number)")
        guard answer.status == .ok else { throw HTTPFailure.s3(answer, doing: "uploading part \(number)") }
        guard let etag = answer.headers.first(name: "ETag") else {
            throw HTTPFailure.invalidAnswer(answer, "uploading part \(number): the answer has no ETag")
        }
        if let digest, let echoed = answer.headers.first(name: "x-amz-checksum-\(checksum)"), echoed != digest {
            throw HTTPFailure(
                .checksumMismatch,
                message: "part \(number) arrived damaged: the server computed \(checksum) \(echoed), we sent \(digest)",
                status: Int(answer.status.code))
        }
        return UploadedPart(number: number, etag: etag, checksum: digest)
    }

    /// CompleteMultipartUpload; a 200 whose body is an error is a failure.
    func complete(uploadId: String, key: String, parts: [UploadedPart]) async throws -> CompletedUpload {
        let element = "Checksum\(checksum.uppercased())"
        var body = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for part in parts {
            body += "<Part><PartNumber>\(part.number)</PartNumber><ETag>\(xmlEscaped(part.etag))</ETag>"
            if let checksum = part.checksum { body += "<\(element)>\(checksum)</\(element)>" }
            body += "</Part>"
        }
        body += "</CompleteMultipartUpload>"
        let answer = try await send(
            "POST", query: "uploadId=\(Self.encode(uploadId))", headers: [("Content-Type", "application/xml")],
            body: Data(body.utf8),
            doing: "completing the multipart upload")
        // AWS names the root CompleteMultipartUploadResult (moto ...Response); an error is an <Error> root.
        if answer.status == .ok, let xml = S3XML(Data(buffer: answer.body)), xml.root != "Error",
            let etag = xml.first("ETag")
        {
            return CompletedUpload(etag: etag, location: xml.first("Location") ?? objectURL)
        }
        throw HTTPFailure.s3(answer, doing: "completing the multipart upload")
    }

    /// AbortMultipartUpload; failures are only logged.
    func abort(uploadId: String, key: String) async {
        let answer = try? await send("DELETE", query: "uploadId=\(Self.encode(uploadId))", doing: "aborting")
        context.logger.info(
            "aborted multipart upload \(uploadId) (\(answer.map { String($0.status.code) } ?? "no answer"))")
    }

    /// HEAD of the object: there, with the file's size, after a completion whose answer was lost.
    func existingObject(key: String, size: Int64) async throws -> CompletedUpload? {
        let head = try await send("HEAD", query: nil, doing: "checking the object")
        guard head.status == .ok, head.integer("Content-Length") == size else { return nil }
        return CompletedUpload(etag: head.headers.first(name: "ETag") ?? "", location: objectURL)
    }

    /// PutObject of the whole file in one request, for a file no larger than a part: there is no upload id
    /// or part list to checkpoint. `Content-MD5` (and the stage's checksum) has the server refuse damaged bytes.
    func putObject(_ digests: ObjectDigests, meter: TransferMeter) async throws -> CompletedUpload {
        var headers = [
            ("Content-Type", contentType),
            ("Content-MD5", digests.md5Base64),
        ]
        if let digest = digests.checksum { headers.append(("x-amz-checksum-\(checksum)", digest)) }
        let answer =
            file.size == 0
            ? try await send("PUT", query: nil, headers: headers, doing: "uploading the object")
            : try await send(
                "PUT", query: nil, headers: headers, stream: (0..<file.size, meter), doing: "uploading the object")
        guard answer.status == .ok else { throw HTTPFailure.s3(answer, doing: "uploading the object") }
        return CompletedUpload(etag: answer.headers.first(name: "ETag") ?? "", location: objectURL)
    }

    /// HEAD of the object: its size and ETag, nil when the storage has none (404, or 403 where listing the
    /// bucket is not allowed).
    func headObject() async throws -> (size: Int64, etag: String)? {
        let head = try await send("HEAD", query: nil, doing: "checking the object")
        if head.status == .notFound || head.status == .forbidden { return nil }
        guard head.status == .ok else { throw HTTPFailure.s3(head, doing: "checking the object") }
        return (head.integer("Content-Length") ?? -1, head.headers.first(name: "ETag") ?? "")
    }

    // MARK: Requests

    /// Sends a signed request with a small body in memory, or a file range streamed.
    private func send(
        _ method: String, query: String?, headers: [(String, String)] = [], body: Data = Data(),
        stream: (Range<Int64>, TransferMeter)? = nil, doing action: String
    ) async throws -> HTTPAnswer {
        let urlText = objectURL + (query.map { "?\($0)" } ?? "")
        guard let url = URL(string: urlText) else {
            throw StageFailure("invalid S3 URL \(urlText)", kind: .invalidOptions)
        }
        let payloadHash = stream == nil ? SigV4Signer.payloadHash(of: body) : SigV4Signer.unsignedPayload
        let length = stream.map { Int64($0.0.count) } ?? Int64(body.count)
        let signed = signer.sign(
            method: method, url: url, headers: headers + [("Content-Length", String(length))], payloadHash: payloadHash,
            date: Date())
        var request = HTTPClientRequest(url: urlText, method: HTTPMethod(rawValue: method), headers: headers + signed)
        if let (range, meter) = stream {
            return try await exchange.send(
                request, streaming: file.body(range, for: request), length: length, meter: meter, doing: action)
        }
        if !body.isEmpty { request.body = .bytes(ByteBuffer(data: body)) }
        return try await exchange.send(request, doing: action)
    }

    /// The base64 checksum of a part, read from the file in chunks.
    private func partChecksum(_ range: Range<Int64>) async throws -> String? {
        switch checksum {
        case "none": return nil
        case "sha256":
            var hasher = SHA256()
            try await file.digest(range) { hasher.update(bufferPointer: $0) }
            return Data(hasher.finalize()).base64EncodedString()
        default:
            var crc = CRC32C()
            try await file.digest(range) { crc.update($0) }
            return Data(crc.bytes).base64EncodedString()
        }
    }

    // MARK: Configuration

    /// Percent-encodes every byte but `A-Z a-z 0-9 - . _ ~` (and `/` when asked), as S3 expects.
    static func encode(_ text: String, keepingSlashes: Bool = false) -> String {
        var result = ""
        for byte in text.utf8 {
            let character = Character(UnicodeScalar(byte))
            if (byte < 0x80 && (character.isLetter || character.isNumber)) || "-._~".contains(character)
                || (keepingSlashes && byte == UInt8(ascii: "/"))
            {
                result.append(character)
            } else {
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }
}
