import AsyncHTTPClient
import Foundation
import HTTPTransport
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
public import StageKit

/// `presigned.upload`: a multipart upload whose parts go straight to the storage through URLs that the
/// application's backend signs (the contract of Uppy's AWS S3 multipart plugin and of
/// TWMultiUploadFileManager). The workflow names the backend's endpoints as URL templates with
/// `{uploadId}`, `{key}` and `{partNumber}` placeholders; the credentials stay with the backend.
public struct PresignedUploadStage: Stage {
    /// The options of `presigned.upload`.
    public struct Options: StageOptions {
        /// POST here with {filename, type, size, metadata} → {uploadId, key}.
        @Option("POST here with {filename, type, size, metadata} → {uploadId, key}.") public var create: String
        /// GET → {url, headers}; placeholders {uploadId}, {key}, {partNumber}.
        @Option("GET → {url, headers}; placeholders {uploadId}, {key}, {partNumber}.") public var signPart: String
        /// GET → [{PartNumber, ETag, Size}], to resume after a crash; placeholders {uploadId}, {key}.
        @Option("GET → [{PartNumber, ETag, Size}], to resume after a crash; placeholders {uploadId}, {key}.")
        public var listParts: String?
        /// POST {parts: [{PartNumber, ETag}]} → {location}; placeholders {uploadId}, {key}.
        @Option("POST {parts: [{PartNumber, ETag}]} → {location}; placeholders {uploadId}, {key}.")
        public var complete: String
        /// DELETE here when the upload fails for good; placeholders {uploadId}, {key}.
        @Option("DELETE here when the upload fails for good; placeholders {uploadId}, {key}.") public var abort: String?
        /// The file (default: the input file).
        @Option("The file (default: the input file).") public var file: String?
        /// Headers for the backend requests (e.g. Authorization), not for the storage.
        @Option("Headers for the backend requests (e.g. Authorization), not for the storage.")
        public var headers: [String: String] = [:]
        /// Sent to the backend with create.
        @Option("Sent to the backend with create.") public var metadata: [String: String] = [:]
        /// The file's type (default: from its extension).
        @Option("The file's type (default: from its extension).") public var contentType: String?
        /// Bytes per part (a smaller one is raised to 5 MiB; grown so there are at most 10,000 parts).
        @Option("Bytes per part (a smaller one is raised to 5 MiB; grown so there are at most 10,000 parts).")
        public var partSize = ByteCount(5 << 20)
        /// Parts in flight at once.
        @Option("Parts in flight at once.", minimum: 1, maximum: 32) public var concurrency = 3
        /// Abort a request that makes no progress for this long.
        @Option("Abort a request that makes no progress for this long.", exclusiveMinimum: 0)
        public var timeout = TimeSpan(seconds: 30)

        public init() {}
    }

    /// The outputs of `presigned.upload`.
    public struct Outputs: StageOutputs {
        /// The multipart upload's id.
        @Output("The multipart upload's id.") public var uploadId = ""
        /// The object key the backend chose.
        @Output("The object key the backend chose.") public var key = ""
        /// Number of parts.
        @Output("Number of parts.") public var parts = 0
        /// The object's URL, as the backend reports it.
        @Output("The object's URL, as the backend reports it.") public var location = ""
        /// Bytes uploaded.
        @Output("Bytes uploaded.") public var size: Int64 = 0

        public init() {}
    }

    public static let stageType = "presigned.upload"
    public static let inputFileOption = "file"
    public static let landingOutput = "location"
    public static let resource = StageResource.network
    /// Its requests are retried by the stage itself (resuming from the server), under the stage's `retry`.
    public static let retriesItself = true
    public static let summary =
        "Multipart upload through part URLs a backend signs (Uppy/S3 contract); parallel, per-part retries, resumable."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let file = try UploadFile(path: options.file ?? context.item.path)
        let timeout = options.timeout
        let backend = PresignedBackend(
            options: options, file: file, context: context,
            exchange: HTTPExchange(
                client: context.httpClient, stallTimeout: timeout,
                answerTimeout: TimeSpan(seconds: max(120, timeout.seconds))))
        let partSize = max(5 << 20, options.partSize.bytes, (file.size + 9_999) / 10_000)
        let upload = MultipartUpload(
            file: file, partSize: partSize, concurrency: options.concurrency,
            target: "presigned:\(options.create)", context: context, backend: backend)
        let (completed, progress) = try await upload.run()
        return Outputs.with {
            $0.uploadId = progress.uploadId
            $0.key = progress.key
            $0.parts = progress.parts.count
            $0.location = completed.location
            $0.size = file.size
        }
    }
}

/// The application's signing backend, and the storage behind the URLs it signs.
private struct PresignedBackend: MultipartBackend {
    let options: PresignedUploadStage.Options
    let file: UploadFile
    let context: StageContext
    let exchange: HTTPExchange

    func create() async throws -> (uploadId: String, key: String) {
        let name = (file.path as NSString).lastPathComponent
        let body: JSONValue = [
            "filename": .string(name), "type": .string(options.contentType ?? MediaType.guess(for: name)),
            "size": .int(Int(file.size)),
            "metadata": .object(options.metadata.mapValues(JSONValue.string)),
        ]
        let answer = try await backend(.POST, options.create, body: body, doing: "creating the upload")
        guard let uploadId = answer["uploadId"]?.stringValue, let key = answer["key"]?.stringValue else {
            throw StageFailure(
                "creating the upload: the backend's answer lacks uploadId or key (\(answer.serialized().prefix(200)))",
                kind: .invalidResponse)
        }
        return (uploadId, key)
    }

    func listParts(uploadId: String, key: String) async throws -> [Int: ListedPart]? {
        guard let template = options.listParts else { return [:] }
        let url = fill(template, uploadId: uploadId, key: key)
        let answer: JSONValue
        do {
            answer = try await backend(.GET, url, doing: "listing the uploaded parts")
        } catch let error as HTTPFailure where error.status == 404 {
            return nil
        }
        guard let list = answer.arrayValue ?? answer["parts"]?.arrayValue else {
            throw StageFailure(
                "listing the uploaded parts: expected an array of parts, got \(answer.kindName)", kind: .invalidResponse
            )
        }
        var parts: [Int: ListedPart] = [:]
        for part in list {
            if let number = part["PartNumber"]?.intValue, let etag = part["ETag"]?.stringValue {
                parts[number] = ListedPart(etag: etag, size: part["Size"]?.intValue.map(Int64.init) ?? -1)
            }
        }
        return parts
    }

    func sendPart(uploadId: String, key: String, number: Int, range: Range<Int64>, meter: TransferMeter) async throws
        -> UploadedPart
    {
        let signed = try await backend(
            .GET, fill(options.signPart, uploadId: uploadId, key: key, partNumber: number),
            doing: "signing part \(number)")
        guard let url = signed["url"]?.stringValue else {
            throw StageFailure("signing part \(number): the backend's answer has no url", kind: .invalidResponse)
        }
        let headers = (signed["headers"]?.objectValue ?? [:]).compactMap { name, value in
            value.stringValue.map { (name, $0) }
        }
        let request = HTTPClientRequest(url: url, method: .PUT, headers: headers)
        let answer = try await exchange.send(
            request, streaming: file.body(range, for: request), length: Int64(range.count), meter: meter,
            doing: "uploading part \(number)")
        guard answer.status == .ok else { throw HTTPFailure.answer(answer, doing: "uploading part \(number)") }
        guard let etag = answer.headers.first(name: "ETag") else {
            throw HTTPFailure.invalidAnswer(
                answer, "uploading part \(number): the storage's answer has no ETag (is it exposed to clients?)")
        }
        return UploadedPart(number: number, etag: etag, checksum: nil)
    }

    func complete(uploadId: String, key: String, parts: [UploadedPart]) async throws -> CompletedUpload {
        let body: JSONValue = [
            "parts": .array(parts.map { ["PartNumber": .int($0.number), "ETag": .string($0.etag)] })
        ]
        let answer = try await backend(
            .POST, fill(options.complete, uploadId: uploadId, key: key), body: body, doing: "completing the upload")
        return CompletedUpload(etag: answer["etag"]?.stringValue ?? "", location: answer["location"]?.stringValue ?? "")
    }

    func abort(uploadId: String, key: String) async {
        guard let template = options.abort else { return }
        _ = try? await backend(.DELETE, fill(template, uploadId: uploadId, key: key), doing: "aborting the upload")
        context.logger.info("aborted multipart upload \(uploadId)")
    }

    func existingObject(key: String, size: Int64) async throws -> CompletedUpload? { nil }

    /// A JSON request to the backend; its JSON answer (`null` for an empty body).
    private func backend(_ method: HTTPMethod, _ url: String, body: JSONValue? = nil, doing action: String) async throws
        -> JSONValue
    {
        var headers = options.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        headers.append(("Accept", "application/json"))
        if body != nil { headers.append(("Content-Type", "application/json")) }
        var request = HTTPClientRequest(url: url, method: method, headers: headers)
        if let body { request.body = .bytes(ByteBuffer(data: body.serializedData())) }
        let answer = try await exchange.send(request, doing: action)
        guard (200..<300).contains(Int(answer.status.code)) else { throw HTTPFailure.answer(answer, doing: action) }
        guard answer.body.readableBytes > 0 else { return .null }
        do {
            return try JSONValue(parsing: Data(buffer: answer.body))
        } catch {
            throw HTTPFailure.invalidAnswer(
                answer, "\(action): the backend's answer is not JSON (\(error.message)): \(answer.bodyExcerpt)")
        }
    }

    /// Puts the upload's values into a URL template (percent-encoded).
    private func fill(_ template: String, uploadId: String, key: String, partNumber: Int? = nil) -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text }
        var url = template.replacingOccurrences(of: "{uploadId}", with: encoded(uploadId)).replacingOccurrences(
            of: "{key}", with: encoded(key))
        if let partNumber { url = url.replacingOccurrences(of: "{partNumber}", with: String(partNumber)) }
        return url
    }
}
