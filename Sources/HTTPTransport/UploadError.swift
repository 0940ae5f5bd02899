import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
public import StageKit

/// An upload failure, classified: network trouble, timeouts, 5xx and 429 are worth retrying (honouring
/// Retry-After); 401 asks for renewed credentials (the stage's `refreshWith`); other 4xx answers, checksum mismatches that persist and files changed under the upload
/// are not.
public struct UploadError: ClassifiedError, Sendable, CustomStringConvertible {
    /// What happened, for people.
    public var message: String
    /// Whether trying again can help.
    public var disposition: FailureDisposition
    /// The HTTP status, when the server answered.
    public var status: Int?

    public var description: String { message }

    /// An error with the given message, disposition and HTTP status.
    package init(message: String, disposition: FailureDisposition, status: Int? = nil) {
        self.message = message
        self.disposition = disposition
        self.status = status
    }

    /// The machine-readable kind, from the HTTP status when the server answered.
    public var kind: ErrorKind {
        guard let status else { return disposition.isRetryable ? .network : .failed }
        return switch status {
        case 401: .notAuthenticated
        case 403: .forbidden
        case 404, 410: .notFound
        case 413, 507: .quotaExceeded
        case 429: .rateLimited
        case 500...599: .serverFailure
        default: .invalidRequest
        }
    }

    /// A failure retrying cannot fix.
    package static func fatal(_ message: String, status: Int? = nil) -> UploadError {
        UploadError(message: message, disposition: .fatal, status: status)
    }

    /// A transient failure.
    package static func retryable(_ message: String, after delay: Duration? = nil, status: Int? = nil) -> UploadError {
        UploadError(message: message, disposition: .retryable(after: delay), status: status)
    }

    /// The error for an unexpected answer: 408, 425, 429 and 5xx are retryable, other statuses fatal.
    package static func unexpected(_ response: HTTPAnswer, doing action: String) -> UploadError {
        let code = Int(response.status.code)
        let detail = response.bodyExcerpt.isEmpty ? "" : ": \(response.bodyExcerpt)"
        let message = "\(action): the server answered \(code) \(response.status.reasonPhrase)\(detail)"
        switch code {
        case 401:
            return UploadError(message: message, disposition: .credentialsExpired, status: code)
        case 408, 425, 429, 500...599:
            return .retryable(message, after: response.retryAfter, status: code)
        default:
            return .fatal(message, status: code)
        }
    }

    /// Classifies an error thrown while a request was in flight.
    package static func classify(_ error: any Error, doing action: String) -> any Error {
        if error is CancellationError || error is UploadError { return error }
        if let clientError = error as? HTTPClientError, clientError == .cancelled { return CancellationError() }
        return UploadError.retryable("\(action): \(Self.describe(error))")
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
