import Foundation
import NIOHTTP1
public import PipelineKit
package import UploadStages

/// A failed platform call, in terms a user can act on (after Newzulu's taxonomy): what kind of trouble,
/// the message, and whether retrying can help.
public struct PlatformError: ClassifiedError, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: String, Sendable {
        /// The network failed (connection refused, reset, timed out): retried.
        case networkFailure = "network failure"
        /// The token is missing or expired (401): renewed through `refreshWith`, when the stage has one.
        case notAuthenticated = "not authenticated"
        /// The token is valid but may not do this (403).
        case wrongCredentials = "wrong credentials"
        /// The account has no room for the file.
        case quotaExceeded = "quota exceeded"
        /// The platform failed (5xx): retried.
        case serverFailure = "server failure"
        /// The file cannot be uploaded (missing, empty, too large).
        case invalidFile = "invalid file"
        /// The platform refused the request (4xx): the message names the field.
        case invalidRequest = "invalid request"
        /// The answer does not match the documented API (missing field, HTML instead of JSON).
        case invalidResponse = "invalid response"
        /// Too many requests (429): retried after Retry-After.
        case rateLimited = "rate limited"
        /// The object does not exist (404).
        case notFound = "not found"
    }

    /// The kind of failure.
    public var kind: Kind
    /// What happened.
    public var message: String
    /// The minimum wait before a retry, when the platform asked for one.
    public var retryAfter: Duration?

    public var disposition: FailureDisposition {
        switch kind {
        case .networkFailure, .serverFailure, .rateLimited: .retryable(after: retryAfter)
        case .notAuthenticated: .credentialsExpired
        default: .fatal
        }
    }

    public var description: String { "\(kind.rawValue): \(message)" }

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, retryAfter: Duration? = nil) {
        self.kind = kind
        self.message = message
        self.retryAfter = retryAfter
    }

    /// The error for an unexpected HTTP answer, with the platform's own message when its body has one.
    package static func answer(_ answer: HTTPAnswer, doing action: String) -> PlatformError {
        let code = Int(answer.status.code)
        let json = try? JSONParser.parse(Data(answer.text.utf8)).value
        let detail = json.flatMap { value in
            [value["error"]?.stringValue, value["developer_message"]?.stringValue, value["message"]?.stringValue]
                .compactMap { $0 }.first
        } ?? answer.bodyExcerpt
        let message = "\(action): \(code) \(answer.status.reasonPhrase)" + (detail.isEmpty ? "" : " — \(detail)")
        switch code {
        case 401: return PlatformError(.notAuthenticated, message)
        case 403 where detail.lowercased().contains("quota"): return PlatformError(.quotaExceeded, message)
        case 403: return PlatformError(.wrongCredentials, message)
        case 404, 410: return PlatformError(.notFound, message)
        case 429: return PlatformError(.rateLimited, message, retryAfter: answer.retryAfter)
        case 500...599: return PlatformError(.serverFailure, message, retryAfter: answer.retryAfter)
        default: return PlatformError(.invalidRequest, message)
        }
    }

    /// The error for a transfer failure (network) or passes others through.
    package static func transfer(_ error: any Error) -> any Error {
        guard let upload = error as? UploadError else { return error }
        return PlatformError(upload.disposition.isRetryable ? .networkFailure : .invalidRequest, upload.message)
    }
}
