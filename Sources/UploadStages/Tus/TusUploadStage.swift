import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTransport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
public import StageKit

/// `tus.upload`: a tus 1.0.0 client (core, creation, creation-with-upload, checksum, expiration,
/// termination). It creates the upload on an `endpoint`, or continues one someone else created at
/// `url` (Vimeo's `upload_link`: never POSTed to). The upload URL is checkpointed before the first byte
/// is sent; after a crash the stage asks the server for its offset (HEAD) and sends only the rest.
public struct TusUploadStage: Stage {
    /// The options of `tus.upload`.
    public struct Options: StageOptions {
        /// Create the upload here (POST), then send the file.
        @Option("Create the upload here (POST), then send the file.") public var endpoint: String?
        /// Continue an upload someone else created (e.g. Vimeo's upload_link); never POSTed to.
        @Option("Continue an upload someone else created (e.g. Vimeo's upload_link); never POSTed to.")
        public var url: String?
        /// The file (default: the input file).
        @Option("The file (default: the input file).") public var file: String?
        /// Bytes per PATCH (default: one streamed PATCH for the rest; 16 MiB when checksums are on).
        @Option("Bytes per PATCH (default: one streamed PATCH for the rest; 16 MiB when checksums are on).")
        public var chunkSize: ByteCount?
        /// Upload this many parts at once through the concatenation extension.
        @Option(
            "Upload this many parts at once through the concatenation extension (with endpoint, when the server offers it)."
        )
        public var parallel = 1
        /// Extra request headers (e.g. Authorization).
        @Option("Extra request headers (e.g. Authorization).") public var headers: [String: String] = [:]
        /// Upload-Metadata (filename and filetype are filled in when missing).
        @Option("Upload-Metadata (filename and filetype are filled in when missing).")
        public var metadata: [String: String] = [:]
        /// Upload-Checksum per PATCH.
        @Option("Upload-Checksum per PATCH; auto uses sha1, md5 or sha256, the first the server offers.")
        public var checksum = Checksum.auto
        /// Abort a request that sends nothing for this long, then resume.
        @Option("Abort a request that sends nothing for this long, then resume.")
        public var stallTimeout = TimeSpan(seconds: 30)

        public init() {}
    }

    /// The checksum of each PATCH.
    public enum Checksum: String, OptionChoice {
        /// The first the server offers of sha1 (every tus server with checksums has it), md5 and sha256, or
        /// none. The checksum guards against bytes damaged on the way, which any of them detects; SHA-256
        /// costs two to three times as much CPU, and where it is slower than the network it paces the upload.
        case auto
        /// SHA-1.
        case sha1
        /// SHA-256.
        case sha256
        /// MD5.
        case md5
        /// No checksum.
        case none
    }

    /// The outputs of `tus.upload`.
    public struct Outputs: Codable, Sendable {
        /// The upload's URL.
        public var url: String
        /// Bytes uploaded (the file's size).
        public var size: Int64
    }

    /// What the stage checkpoints.
    struct Progress: Codable, Sendable {
        var uploadURL: String
        /// Whether this stage created the upload (then it may create it anew when the server lost it).
        var created: Bool
        var fingerprint: UploadFile.Fingerprint
        /// The server's offset after the last acknowledged PATCH (informational: HEAD decides).
        var offset: Int64
        /// A parallel upload's partial uploads; `uploadURL` is empty until they are concatenated.
        var parts: [Segment]?
    }

    /// A stretch of the file that one tus upload carries: the whole file, or one part of a parallel upload.
    struct Segment: Codable, Sendable, Hashable {
        var url: String
        var start: Int64
        var end: Int64

        var length: Int64 { end - start }
    }

    public static let stageType = "tus.upload"
    public static let resource = StageResource.network
    /// Its requests are retried by the stage itself (resuming from the server), under the stage's `retry`.
    public static let retriesItself = true
    public static let summary =
        "Uploads a file with the tus 1.0 resumable protocol; resumes from the server's offset after a crash."
    public static let outputSchema = OutputSchema([
        OutputField("url", "The upload's URL."),
        OutputField("size", "Bytes uploaded."),
    ])

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        guard (options.endpoint == nil) != (options.url == nil) else {
            throw StageFailure(
                "give either endpoint (create the upload) or url (continue an existing one)", kind: .invalidOptions)
        }
        let file = try UploadFile(path: options.file ?? context.item.path)
        let session = TusSession(options: options, file: file, context: context)
        return try await session.upload()
    }
}

/// One tus upload of one file, as the stage runs it; in parallel mode its part tasks share it, so what
/// changes while it runs is behind a lock.
private final class TusSession: Sendable {
    private let options: TusUploadStage.Options
    private let file: UploadFile
    private let context: StageContext
    private let exchange: HTTPExchange
    private let state: NIOLockedValueBox<State>
    private let acknowledged = NIOLockedValueBox<[Int: Int64]>([:])

    /// What changes while the upload runs.
    private struct State {
        var progress: TusUploadStage.Progress?
        var capabilities = Capabilities()
    }

    /// The last checkpointed progress.
    private var progress: TusUploadStage.Progress? {
        get { state.withLockedValue { $0.progress } }
        set { state.withLockedValue { $0.progress = newValue } }
    }

    /// What the server offers.
    private var capabilities: Capabilities {
        get { state.withLockedValue { $0.capabilities } }
        set { state.withLockedValue { $0.capabilities = newValue } }
    }

    /// What the server said in its OPTIONS answer.
    struct Capabilities {
        var extensions: Set<String> = []
        var checksumAlgorithms: [String] = []
    }

    static let version = "1.0.0"

    init(options: TusUploadStage.Options, file: UploadFile, context: StageContext) {
        self.options = options
        self.file = file
        self.context = context
        let stall = options.stallTimeout
        self.exchange = HTTPExchange(
            client: context.httpClient, stallTimeout: stall, answerTimeout: TimeSpan(seconds: max(120, stall.seconds)))
        self.state = NIOLockedValueBox(State(progress: context.lastCheckpoint(as: TusUploadStage.Progress.self)))
    }

    func upload() async throws -> TusUploadStage.Outputs {
        if let recorded = progress?.fingerprint, file.changed(since: recorded) {
            if let progress, progress.created { await terminate(progress.uploadURL) }
            try file.check(against: recorded)
        }
        capabilities = await discover(options.url ?? options.endpoint ?? "")
        let algorithm = try checksumAlgorithm()
        let chunkSize = options.chunkSize?.bytes ?? (algorithm == nil ? nil : 16 << 20)
        let parallel = max(1, min(options.parallel, 16))
        if parallel > 1, options.endpoint == nil || !capabilities.extensions.contains("concatenation") {
            context.logger.warning(
                "parallel needs an endpoint whose server offers the concatenation extension; uploading in one stream")
        }
        let concatenate = parallel > 1 && options.endpoint != nil && capabilities.extensions.contains("concatenation")
        do {
            try await TransferRetry(context: context).run(
                progress: { [self] in acknowledged.withLockedValue { $0.values.reduce(0, +) } }
            ) {
                if concatenate {
                    try await uploadInParts(parallel, chunkSize: chunkSize, algorithm: algorithm)
                } else {
                    let url = try await uploadURL()
                    try await send(
                        TusUploadStage.Segment(url: url, start: 0, end: file.size), index: 0, chunkSize: chunkSize,
                        algorithm: algorithm)
                }
                return true
            }
        } catch let error as UploadError where error.disposition == .fatal {
            if let progress, progress.created, capabilities.extensions.contains("termination") {
                await terminate(progress.uploadURL)
            }
            throw error
        }
        guard let url = progress?.uploadURL else { throw UploadError.fatal("the upload has no URL") }
        return TusUploadStage.Outputs(url: url, size: file.size)
    }

    // MARK: Steps

    /// The upload's URL: the given one, the checkpointed one, or a new one created (and checkpointed
    /// before any byte is sent).
    private func uploadURL() async throws -> String {
        if let progress { return progress.uploadURL }
        if let url = options.url {
            try await record(
                TusUploadStage.Progress(uploadURL: url, created: false, fingerprint: file.fingerprint, offset: 0))
            return url
        }
        let resolved = try await create([("Upload-Length", String(file.size))])
        try await record(
            TusUploadStage.Progress(uploadURL: resolved, created: true, fingerprint: file.fingerprint, offset: 0))
        context.logger.info("created upload \(resolved)")
        return resolved
    }

    /// POSTs to the endpoint (creation) with `headers` and the metadata; returns the new upload's URL.
    private func create(_ headers: [(String, String)]) async throws -> String {
        guard let endpoint = options.endpoint else { throw UploadError.fatal("no endpoint") }
        let request = HTTPClientRequest(
            url: endpoint, method: .POST, headers: baseHeaders() + headers + [("Upload-Metadata", metadataHeader())])
        let answer = try await exchange.send(request, doing: "creating the upload at \(endpoint)")
        guard answer.status == .created else {
            if answer.status.code == 412 { throw versionError(answer) }
            if answer.status.code == 413 {
                throw UploadError.fatal("the server refuses a file of \(ByteCount(file.size)) (413 too large)")
            }
            throw UploadError.unexpected(answer, doing: "creating the upload at \(endpoint)")
        }
        guard let location = answer.headers.first(name: "Location"),
            let resolved = URL(string: location, relativeTo: URL(string: endpoint))?.absoluteString
        else {
            throw UploadError.fatal("creating the upload: the server's 201 answer has no usable Location header")
        }
        return resolved
    }

    /// A parallel upload: `count` partial uploads sent at the same time, then concatenated into the final
    /// upload (the concatenation extension). The parts are checkpointed before any byte is sent; after a
    /// crash each part continues from its own offset.
    private func uploadInParts(_ count: Int, chunkSize: Int64?, algorithm: String?) async throws {
        if let progress, !progress.uploadURL.isEmpty { return }
        let parts: [TusUploadStage.Segment]
        if let known = progress?.parts {
            parts = known
        } else {
            let size = max(1, (file.size + Int64(count) - 1) / Int64(count))
            var created: [TusUploadStage.Segment] = []
            for start in stride(from: Int64(0), to: max(file.size, 1), by: Int(size)) {
                let end = min(file.size, start + size)
                let url = try await create([("Upload-Concat", "partial"), ("Upload-Length", String(end - start))])
                created.append(TusUploadStage.Segment(url: url, start: start, end: end))
            }
            parts = created
            try await record(
                TusUploadStage.Progress(
                    uploadURL: "", created: true, fingerprint: file.fingerprint, offset: 0, parts: parts))
            context.logger.info("created \(parts.count) partial uploads")
        }
        let counter = PartsProgress(base: 0, total: file.size, report: context.reportProgress)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, part) in parts.enumerated() {
                group.addTask {
                    try await self.send(
                        part, index: index, chunkSize: chunkSize, algorithm: algorithm, counter: counter)
                }
            }
            try await group.waitForAll()
        }
        let final = try await create([("Upload-Concat", "final;" + parts.map(\.url).joined(separator: " "))])
        try await record(
            TusUploadStage.Progress(
                uploadURL: final, created: true, fingerprint: file.fingerprint, offset: file.size, parts: parts))
        context.logger.info("concatenated \(parts.count) parts into \(final)")
    }

    /// Sends a segment from the server's offset (HEAD) to its end, chunk by chunk. With checksums, the digest
    /// of the next chunk is computed while the current one is sent: digesting costs about as much as sending
    /// (SHA-256 runs at a few hundred MB/s), and the server checks its own digest before it answers.
    private func send(
        _ segment: TusUploadStage.Segment, index: Int, chunkSize: Int64?, algorithm: String?,
        counter: PartsProgress? = nil
    ) async throws {
        var offset = try await offset(of: segment)
        acknowledged.withLockedValue { $0[index] = offset }
        var upcoming: (range: Range<Int64>, digest: Task<String, any Error>)?
        defer { upcoming?.digest.cancel() }
        /// The file's bytes of the PATCH that starts at `start` in the segment.
        func chunk(from start: Int64) -> Range<Int64> {
            let end = chunkSize.map { min(segment.length, start + $0) } ?? segment.length
            return (segment.start + start)..<(segment.start + end)
        }
        while offset < segment.length {
            let bytes = chunk(from: offset)
            var checksum: String?
            if let algorithm {
                let value: String
                if let upcoming, upcoming.range == bytes {
                    value = try await upcoming.digest.value
                } else {
                    upcoming?.digest.cancel()
                    value = try await digest(bytes, algorithm: algorithm)
                }
                checksum = "\(algorithm) \(value)"
                let next = chunk(from: bytes.upperBound - segment.start)
                upcoming = next.isEmpty ? nil : (next, Task { try await self.digest(next, algorithm: algorithm) })
            }
            offset = try await patch(segment, bytes: bytes, checksum: checksum, counter: counter.map { ($0, index) })
            acknowledged.withLockedValue { $0[index] = offset }
        }
    }

    /// The server's offset in a segment (HEAD). A lost upload we created is created anew; one we did not is an error.
    private func offset(of segment: TusUploadStage.Segment) async throws -> Int64 {
        let url = segment.url
        let answer = try await exchange.send(
            HTTPClientRequest(url: url, method: .HEAD, headers: baseHeaders()), doing: "asking \(url) for its offset")
        switch answer.status.code {
        case 200, 204:
            guard let offset = answer.integer("Upload-Offset"), offset >= 0, offset <= segment.length else {
                throw UploadError.fatal("HEAD \(url): the answer has no valid Upload-Offset header")
            }
            if let length = answer.integer("Upload-Length"), length != segment.length {
                throw UploadError.fatal(
                    "the upload at \(url) expects \(length) bytes but the file has \(segment.length)")
            }
            return offset
        case 403, 404, 410:
            guard progress?.created == true else {
                throw UploadError.fatal(
                    "the upload \(url) no longer exists (\(answer.status.code)); ask for a new upload link")
            }
            context.logger.warning(
                "the server no longer has the upload \(url) (\(answer.status.code)); creating it anew")
            progress = nil
            throw UploadError.retryable("the upload \(url) was lost", after: .zero)
        case 412:
            throw versionError(answer)
        default:
            throw UploadError.unexpected(answer, doing: "asking \(url) for its offset")
        }
    }

    /// Sends `bytes` of the file, a stretch of `segment`, with their `Upload-Checksum` value, if any; returns
    /// the new offset in the segment.
    private func patch(
        _ segment: TusUploadStage.Segment, bytes: Range<Int64>, checksum: String?, counter: (PartsProgress, Int)?
    ) async throws -> Int64 {
        let url = segment.url
        let (start, end) = (bytes.lowerBound - segment.start, bytes.upperBound - segment.start)
        var headers = baseHeaders()
        headers.append(("Upload-Offset", String(start)))
        headers.append(("Content-Type", "application/offset+octet-stream"))
        if let checksum { headers.append(("Upload-Checksum", checksum)) }
        let meter = TransferMeter(
            base: counter == nil ? segment.start + start : start, total: counter == nil ? file.size : segment.length,
            limiter: context.services[BandwidthLimitKey.self]
        ) { progress in
            if let (counter, index) = counter {
                counter.update(part: index, bytes: progress.completed)
            } else {
                self.context.reportProgress(progress)
            }
        }
        let request = HTTPClientRequest(url: url, method: .PATCH, headers: headers)
        let answer = try await exchange.send(
            request, streaming: file.body(bytes, for: request), length: end - start, meter: meter,
            doing: "sending bytes \(bytes.lowerBound)–\(bytes.upperBound) to \(url)")
        switch answer.status.code {
        case 200, 204:
            guard let offset = answer.integer("Upload-Offset"), offset > start, offset <= segment.length else {
                throw UploadError.fatal("PATCH \(url): the answer has no valid Upload-Offset header")
            }
            if var progress, progress.parts == nil {
                progress.offset = offset
                try await record(progress)
            }
            return offset
        case 409:
            // The server's offset moved (a cut PATCH it still digests): ask again shortly.
            throw UploadError.retryable("offset conflict at \(start) (409)", after: .milliseconds(300), status: 409)
        case 460:
            throw UploadError.retryable(
                "the server found a checksum mismatch in bytes \(bytes.lowerBound)–\(bytes.upperBound) (460)",
                status: 460)
        case 404, 410:
            return try await offset(of: segment)
        case 412:
            throw versionError(answer)
        default:
            throw UploadError.unexpected(answer, doing: "sending bytes \(bytes.lowerBound)–\(bytes.upperBound)")
        }
    }

    // MARK: Helpers

    private func record(_ value: TusUploadStage.Progress) async throws {
        progress = value
        try await context.checkpoint(value)
    }

    private func baseHeaders() -> [(String, String)] {
        [("Tus-Resumable", Self.version)] + options.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// `Upload-Metadata`: `key base64(value)` pairs; tus servers commonly need filename and filetype.
    private func metadataHeader() -> String {
        var metadata = options.metadata
        let name = (file.path as NSString).lastPathComponent
        if metadata["filename"] == nil { metadata["filename"] = name }
        if metadata["filetype"] == nil { metadata["filetype"] = MediaType.guess(for: name) }
        return metadata.sorted { $0.key < $1.key }.map { key, value in
            "\(key) \(Data(value.utf8).base64EncodedString())"
        }.joined(separator: ",")
    }

    /// OPTIONS: the extensions and checksum algorithms the server offers (none if it does not answer).
    private func discover(_ url: String) async -> Capabilities {
        guard
            let answer = try? await exchange.send(
                HTTPClientRequest(url: url, method: .OPTIONS, headers: baseHeaders()), doing: "OPTIONS \(url)"),
            answer.status.code < 300
        else { return Capabilities() }
        func list(_ name: String) -> [String] {
            (answer.headers.first(name: name) ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
        }
        return Capabilities(extensions: Set(list("Tus-Extension")), checksumAlgorithms: list("Tus-Checksum-Algorithm"))
    }

    private func checksumAlgorithm() throws -> String? {
        let wanted = options.checksum.rawValue
        let supported = ["sha1", "md5", "sha256"]
        switch options.checksum {
        case .none: return nil
        case .auto:
            guard capabilities.extensions.contains("checksum") else { return nil }
            return supported.first { capabilities.checksumAlgorithms.contains($0) }
        default:
            guard capabilities.extensions.contains("checksum"), capabilities.checksumAlgorithms.contains(wanted) else {
                throw UploadError.fatal(
                    "the server does not offer \(wanted) checksums (it offers: \(capabilities.checksumAlgorithms.joined(separator: ", ")))"
                )
            }
            return wanted
        }
    }

    /// The base64 digest of a range, read from the file in chunks (never held whole).
    private func digest(_ range: Range<Int64>, algorithm: String) async throws -> String {
        var sha256 = SHA256()
        var sha1 = Insecure.SHA1()
        var md5 = Insecure.MD5()
        for try await chunk in file.chunks(range) {
            try Task.checkCancellation()
            chunk.withUnsafeReadableBytes { bytes in
                switch algorithm {
                case "sha256": sha256.update(bufferPointer: bytes)
                case "sha1": sha1.update(bufferPointer: bytes)
                default: md5.update(bufferPointer: bytes)
                }
            }
        }
        let bytes: [UInt8]
        switch algorithm {
        case "sha256": bytes = Array(sha256.finalize())
        case "sha1": bytes = Array(sha1.finalize())
        default: bytes = Array(md5.finalize())
        }
        return Data(bytes).base64EncodedString()
    }

    private func versionError(_ answer: HTTPAnswer) -> UploadError {
        UploadError.fatal(
            "the server does not speak tus \(Self.version) (412; it supports \(answer.headers.first(name: "Tus-Version") ?? "no version it names"))"
        )
    }

    /// DELETE (termination): frees the server's partial upload; failures are only logged.
    private func terminate(_ url: String) async {
        let answer = try? await exchange.send(
            HTTPClientRequest(url: url, method: .DELETE, headers: baseHeaders()), doing: "terminating \(url)")
        context.logger.info("terminated the upload \(url) (\(answer.map { String($0.status.code) } ?? "no answer"))")
    }
}

/// Media types by file extension, for `Upload-Metadata` and `Content-Type`.
enum MediaType {
    static func guess(for name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "mp4", "m4v": "video/mp4"
        case "mov": "video/quicktime"
        case "mkv": "video/x-matroska"
        case "webm": "video/webm"
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "json": "application/json"
        default: "application/octet-stream"
        }
    }
}
