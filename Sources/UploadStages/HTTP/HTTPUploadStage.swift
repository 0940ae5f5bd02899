import AsyncHTTPClient
import Foundation
import HTTPTransport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
public import StageKit

/// `http.upload`: a resumable PUT with `Content-Range`, as Vimeo's legacy streaming upload and
/// Google-style resumable uploads speak it. After a failure or a crash it asks the server how much it has
/// (`Content-Range: bytes */SIZE`, answered `308` with `Range: bytes=0-N`) and continues from there.
public struct HTTPUploadStage: Stage {
    /// The options of `http.upload`.
    public struct Options: StageOptions {
        /// Where to PUT the file (e.g. Vimeo's upload_link_secure).
        @Option("Where to PUT the file (e.g. Vimeo's upload_link_secure).") public var url: String
        /// The file (default: the input file).
        @Option("The file (default: the input file).") public var file: String?
        /// The request method.
        @Option("The request method.") public var method = Method.PUT
        /// Extra request headers (e.g. Authorization).
        @Option("Extra request headers (e.g. Authorization).") public var headers: [String: String] = [:]
        /// Content-Type of the body (default: from the file extension).
        @Option("Content-Type of the body (default: from the file extension).") public var contentType: String?
        /// Bytes per request (default: one request for the rest of the file).
        @Option("Bytes per request (default: one request for the rest of the file).")
        public var chunkSize: ByteCount?
        /// Abort a request that sends nothing for this long, then resume.
        @Option("Abort a request that sends nothing for this long, then resume.", exclusiveMinimum: 0)
        public var stallTimeout = TimeSpan(seconds: 30)

        public init() {}
    }

    /// The request method of the upload.
    public enum Method: String, OptionChoice {
        /// PUT (resumable with Content-Range).
        case PUT
        /// POST.
        case POST
    }

    /// The outputs of `http.upload`.
    public struct Outputs: StageOutputs {
        /// The URL the file went to.
        @Output("The URL the file went to.") public var url = ""
        /// Bytes uploaded.
        @Output("Bytes uploaded.") public var size: Int64 = 0
        /// The final answer's status (200, 201 or 204).
        @Output("The final HTTP status.") public var status = 0

        public init() {}
    }

    /// What the stage checkpoints.
    struct Progress: Codable, Sendable {
        var url: String
        var fingerprint: UploadFile.Fingerprint
        var offset: Int64
    }

    public static let stageType = "http.upload"
    public static let inputFileOption = "file"
    public static let landingOutput = "url"
    public static let resource = StageResource.network
    /// Its requests are retried by the stage itself (resuming from the server), under the stage's `retry`.
    public static let retriesItself = true
    public static let summary =
        "Uploads a file with a resumable PUT (Content-Range, 308 Resume Incomplete); resumes from the server's range."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let file = try UploadFile(path: options.file ?? context.item.path)
        let stall = options.stallTimeout
        let upload = ResumablePut(
            options: options, file: file, context: context,
            exchange: HTTPExchange(
                client: context.httpClient, stallTimeout: stall,
                answerTimeout: TimeSpan(seconds: max(120, stall.seconds))))
        return try await upload.run()
    }
}

/// One resumable PUT of one file.
private final class ResumablePut: Sendable {
    private let options: HTTPUploadStage.Options
    private let file: UploadFile
    private let context: StageContext
    private let exchange: HTTPExchange
    /// The server's offset and, once it answered the last byte, its final status; the retry loop reads the
    /// offset from its own task.
    private let state = NIOLockedValueBox<(offset: Int64, finalStatus: Int?)>((0, nil))

    private var offset: Int64 {
        get { state.withLockedValue { $0.offset } }
        set { state.withLockedValue { $0.offset = newValue } }
    }

    private var finalStatus: Int? {
        get { state.withLockedValue { $0.finalStatus } }
        set { state.withLockedValue { $0.finalStatus = newValue } }
    }

    init(options: HTTPUploadStage.Options, file: UploadFile, context: StageContext, exchange: HTTPExchange) {
        self.options = options
        self.file = file
        self.context = context
        self.exchange = exchange
    }

    func run() async throws -> HTTPUploadStage.Outputs {
        var mustProbe = false
        if let recorded = context.lastCheckpoint(as: HTTPUploadStage.Progress.self), recorded.url == options.url {
            try file.check(against: recorded.fingerprint)
            mustProbe = true
        }
        try await context.checkpoint(
            HTTPUploadStage.Progress(url: options.url, fingerprint: file.fingerprint, offset: offset))
        try await TransferRetry(context: context).run(progress: { [self] in offset }) {
            if mustProbe {
                if try await probe() { return true }
            }
            mustProbe = true
            while finalStatus == nil {
                try await send()
            }
            return true
        }
        return HTTPUploadStage.Outputs.with {
            $0.url = options.url
            $0.size = file.size
            $0.status = finalStatus ?? 200
        }
    }

    private var method: HTTPMethod { HTTPMethod(rawValue: options.method.rawValue) }

    private func headers() -> [(String, String)] {
        [("Content-Type", options.contentType ?? MediaType.guess(for: file.path))]
            + options.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Asks how much the server has; true when it has everything.
    private func probe() async throws -> Bool {
        let request = HTTPClientRequest(
            url: options.url, method: method,
            headers: headers() + [("Content-Range", "bytes */\(file.size)"), ("Content-Length", "0")])
        let answer = try await exchange.send(request, doing: "asking \(options.url) how much it has")
        return try handle(answer, doing: "asking how much the server has")
    }

    /// Sends the next chunk (or the rest) from the current offset.
    private func send() async throws {
        let end = options.chunkSize.map { min(file.size, offset + max(1, $0.bytes)) } ?? file.size
        var headers = headers()
        if file.size > 0 { headers.append(("Content-Range", "bytes \(offset)-\(end - 1)/\(file.size)")) }
        let meter = TransferMeter(
            base: offset, total: file.size, limiter: context.services[BandwidthLimitKey.self],
            report: context.reportProgress)
        let request = HTTPClientRequest(url: options.url, method: method, headers: headers)
        let answer = try await exchange.send(
            request, streaming: file.body(offset..<end, for: request), length: end - offset, meter: meter,
            doing: "sending bytes \(offset)–\(end) to \(options.url)")
        _ = try handle(answer, doing: "sending bytes \(offset)–\(end)")
    }

    /// 200/201/204: done; 308: the server's range says where to continue; anything else is an error.
    private func handle(_ answer: HTTPAnswer, doing action: String) throws -> Bool {
        switch answer.status.code {
        case 200, 201, 204:
            offset = file.size
            finalStatus = Int(answer.status.code)
            return true
        case 308:
            let previous = offset
            offset = Self.nextOffset(fromRange: answer.headers.first(name: "Range"))
            guard offset <= file.size else {
                throw HTTPFailure.invalidAnswer(
                    answer, "\(action): the server claims more bytes (\(offset)) than the file has")
            }
            if offset < previous {
                context.logger.warning("the server kept bytes up to \(offset) only; sending again from there")
            }
            return false
        case 404, 410:
            throw HTTPFailure.answer(answer, doing: action).refined(
                message: "\(action): the upload URL no longer exists (\(answer.status.code)); ask for a new one")
        default:
            throw HTTPFailure.answer(answer, doing: action)
        }
    }

    /// The next offset after `Range: bytes=0-N` (N + 1), or 0 when the server has nothing.
    static func nextOffset(fromRange header: String?) -> Int64 {
        guard let header, let dash = header.lastIndex(of: "-"),
            let last = Int64(header[header.index(after: dash)...].trimmingCharacters(in: .whitespaces))
        else { return 0 }
        return last + 1
    }
}
