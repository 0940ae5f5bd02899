import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
public import StageKit

/// A failed HTTP exchange, classified: the one error that upload and platform stages throw for a request that
/// got no usable answer. ``answer(_:doing:detail:)`` holds the only table from an HTTP status to a kind and a
/// disposition; what a protocol or platform says beyond the status (S3's XML error codes, Vimeo's
/// `error_code`, tus's 409 and 460) refines that classification with ``refined(as:disposition:message:)``
/// rather than mapping statuses again.
public struct HTTPFailure: ClassifiedError, Sendable, CustomStringConvertible {
    /// What kind of failure this is. A struct wrapping a private enum, so that codes can be added without
    /// breaking a `switch` of a user.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case transport, timedOut, checksumMismatch
            case notAuthenticated, forbidden, quotaExceeded, payloadTooLarge, insufficientStorage, notFound
            case requestTimeout, tooEarly, rateLimited, serverFailure, rejected, unexpectedAnswer
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// No answer: the connection was refused, reset or closed, or the body was cut off.
        public static let transport = Code(.transport)
        /// No progress or no answer within the exchange's limits.
        public static let timedOut = Code(.timedOut)
        /// The bytes arrived damaged: the server's digest differs from ours.
        public static let checksumMismatch = Code(.checksumMismatch)
        /// 401: the credentials are missing or expired.
        public static let notAuthenticated = Code(.notAuthenticated)
        /// 403: the credentials are valid but may not do this.
        public static let forbidden = Code(.forbidden)
        /// The account has no room left (403 naming a quota, or a platform's own code).
        public static let quotaExceeded = Code(.quotaExceeded)
        /// 413: the server takes no body this large.
        public static let payloadTooLarge = Code(.payloadTooLarge)
        /// 507: the server's storage is full.
        public static let insufficientStorage = Code(.insufficientStorage)
        /// 404, 410: the remote object does not exist (any more).
        public static let notFound = Code(.notFound)
        /// 408: the server gave up waiting for the request.
        public static let requestTimeout = Code(.requestTimeout)
        /// 425: the server will not risk a request that could be replayed yet.
        public static let tooEarly = Code(.tooEarly)
        /// 429: too many requests.
        public static let rateLimited = Code(.rateLimited)
        /// 5xx (but 507): the server failed.
        public static let serverFailure = Code(.serverFailure)
        /// Another 4xx: the server refused the request as it was.
        public static let rejected = Code(.rejected)
        /// An answer the protocol does not allow here: another status, or a required header or field missing.
        public static let unexpectedAnswer = Code(.unexpectedAnswer)

        /// The kind the engine reports for this code.
        public var kind: ErrorKind {
            switch value {
            // A damaged body is damage on the way: the network's fault, and sending it again is the cure.
            case .transport, .timedOut, .checksumMismatch: .network
            // 408 and 425 say the request met the server too slowly or too early, not that it was wrong.
            case .requestTimeout, .tooEarly: .network
            case .notAuthenticated: .notAuthenticated
            case .forbidden: .forbidden
            // 413 and 507 are the upload's "no room": for a file, a size limit and a full disk are quotas.
            case .quotaExceeded, .payloadTooLarge, .insufficientStorage: .quotaExceeded
            case .notFound: .notFound
            case .rateLimited: .rateLimited
            case .serverFailure: .serverFailure
            case .rejected: .invalidRequest
            case .unexpectedAnswer: .invalidResponse
            }
        }

        /// Whether trying again can help, before any refinement.
        func disposition(retryAfter: Duration?) -> FailureDisposition {
            switch value {
            case .transport, .timedOut, .checksumMismatch, .requestTimeout, .tooEarly, .rateLimited, .serverFailure:
                .retryable(after: retryAfter)
            case .notAuthenticated: .credentialsExpired
            // 507 is fatal: RFC 4918 says a request that met it must not be repeated without a user's action,
            // and a full disk does not empty within a retry's backoff.
            case .forbidden, .quotaExceeded, .payloadTooLarge, .insufficientStorage, .notFound, .rejected,
                .unexpectedAnswer:
                .fatal
            }
        }

        /// The code as words joined by `-`, for logs.
        public var description: String {
            switch value {
            case .transport: "transport"
            case .timedOut: "timed-out"
            case .checksumMismatch: "checksum-mismatch"
            case .notAuthenticated: "not-authenticated"
            case .forbidden: "forbidden"
            case .quotaExceeded: "quota-exceeded"
            case .payloadTooLarge: "payload-too-large"
            case .insufficientStorage: "insufficient-storage"
            case .notFound: "not-found"
            case .requestTimeout: "request-timeout"
            case .tooEarly: "too-early"
            case .rateLimited: "rate-limited"
            case .serverFailure: "server-failure"
            case .rejected: "rejected"
            case .unexpectedAnswer: "unexpected-answer"
            }
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened, for people: the action, the status and what the server said.
    public var message: String
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// What the server said beyond its status (a platform's error text, S3's error code, the body's start).
    public var detail: String
    /// Whether trying again can help; a `Retry-After` the server sent is its minimum wait.
    public var disposition: FailureDisposition
    /// The wait the server asked for (`Retry-After`), kept when a refinement changes the code.
    public var retryAfter: Duration?
    /// The error underneath, when the failure came from below HTTP (a refused connection, a reset).
    public var cause: (any Error)?

    /// What kind of failure this is, for machines: the code's kind, whatever refined it.
    public var kind: ErrorKind { code.kind }

    /// The message: the kind travels separately (in `--json` events and reports).
    public var description: String { message }

    /// A failure of the given code, retryable or not as the code says.
    package init(
        _ code: Code, message: String, status: Int? = nil, detail: String = "", retryAfter: Duration? = nil,
        cause: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.status = status
        self.detail = detail
        self.disposition = code.disposition(retryAfter: retryAfter)
        self.retryAfter = retryAfter
        self.cause = cause
    }

    /// Whether the server answered and refused the request (a 4xx status): it did nothing. A server error,
    /// a lost connection or an answer that breaks the protocol leave open whether it acted.
    public var refusedRequest: Bool {
        status.map { (400..<500).contains($0) } ?? false
    }

    /// The failure for an answer the caller did not expect: its status decides the code (see the table in
    /// ``code(forStatus:detail:)``), `Retry-After` the minimum wait. `detail` is what the server said, when
    /// the caller knows how to read it (a platform's JSON error); by default, the start of the body.
    package static func answer(_ answer: HTTPAnswer, doing action: String, detail: String? = nil) -> HTTPFailure {
        let status = Int(answer.status.code)
        let detail = detail ?? answer.bodyExcerpt
        return HTTPFailure(
            code(forStatus: status, detail: detail),
            message: "\(action): the server answered \(status) \(answer.status.reasonPhrase)"
                + (detail.isEmpty ? "" : ": \(detail)"),
            status: status, detail: detail, retryAfter: answer.retryAfter)
    }

    /// The one table from an HTTP status to a code. Where the upload and platform stages used to differ, it
    /// keeps the union of their rules: 403 naming a quota is a full account (a platform's answer), 413 and
    /// 507 are about room (an upload's answer), and 408 and 425 are worth retrying (the request was fine).
    static func code(forStatus status: Int, detail: String) -> Code {
        switch status {
        case 401: .notAuthenticated
        case 403 where detail.lowercased().contains("quota"): .quotaExceeded
        case 403: .forbidden
        case 404, 410: .notFound
        case 408: .requestTimeout
        case 413: .payloadTooLarge
        case 425: .tooEarly
        case 429: .rateLimited
        case 507: .insufficientStorage
        case 500...599: .serverFailure
        case 400...499: .rejected
        default: .unexpectedAnswer
        }
    }

    /// The failure for an answer whose status is fine but whose content breaks the protocol (a required
    /// header missing or invalid): retrying the same request would get the same answer.
    package static func invalidAnswer(_ answer: HTTPAnswer, _ message: String) -> HTTPFailure {
        HTTPFailure(.unexpectedAnswer, message: message, status: Int(answer.status.code), detail: answer.bodyExcerpt)
    }

    /// The same failure as a protocol or platform reads it: another code (its disposition follows unless
    /// given), another message; the status, the detail, the wait the server asked for and the cause stay.
    package func refined(
        as code: Code? = nil, disposition: FailureDisposition? = nil, message: String? = nil
    ) -> HTTPFailure {
        var refined = self
        if let code {
            refined.code = code
            refined.disposition = code.disposition(retryAfter: retryAfter)
        }
        if let disposition { refined.disposition = disposition }
        if let message { refined.message = message }
        return refined
    }

    /// Classifies an error thrown while a request was in flight: cancellation and errors that are already
    /// classified (a file that shrank under its body) pass through; the rest is trouble below HTTP, worth
    /// retrying, with the error kept as the cause.
    package static func classify(_ error: any Error, doing action: String) -> any Error {
        if error is CancellationError || error is any ClassifiedError { return error }
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .cancelled: return CancellationError()
            case .connectTimeout, .readTimeout, .deadlineExceeded:
                return HTTPFailure(.timedOut, message: "\(action): \(describe(error))", cause: error)
            default: break
            }
        }
        return HTTPFailure(.transport, message: "\(action): \(describe(error))", cause: error)
    }

    private static func describe(_ error: any Error) -> String {
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .remoteConnectionClosed: return "the connection was closed by the server"
            case .connectTimeout: return "connecting timed out"
            case .readTimeout: return "the server stopped answering"
            case .deadlineExceeded: return "the request took too long"
            default: return "\(clientError)"
            }
        }
        if let channelError = error as? ChannelError { return "connection error (\(channelError))" }
        if let ioError = error as? IOError { return "connection error (\(ioError.description))" }
        return "\(error)"
    }
}
