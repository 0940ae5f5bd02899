import Foundation
package import HTTPTransport
import NIOHTTP1
public import StageKit

/// A failed platform call, in terms a user can act on (after Newzulu's taxonomy): what kind of trouble,
/// the message, and whether retrying can help.
public struct PlatformError: ClassifiedError, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public var kind: ErrorKind
    /// What happened.
    public var message: String
    /// The minimum wait before a retry, when the platform asked for one.
    public var retryAfter: Duration?

    public var disposition: FailureDisposition {
        switch kind {
        case .network, .serverFailure, .rateLimited: .retryable(after: retryAfter)
        case .notAuthenticated: .credentialsExpired
        default: .fatal
        }
    }

    public var description: String { "\(kind.rawValue.replacingOccurrences(of: "-", with: " ")): \(message)" }

    /// Creates an error.
    public init(_ kind: ErrorKind, _ message: String, retryAfter: Duration? = nil) {
        self.kind = kind
        self.message = message
        self.retryAfter = retryAfter
    }

    /// The error for an unexpected HTTP answer, with the platform's own message when its body has one.
    package static func answer(_ answer: HTTPAnswer, doing action: String) -> PlatformError {
        let code = Int(answer.status.code)
        let json = try? JSONValue(parsing: answer.text)
        let detail =
            json.flatMap { value in
                [value["error"]?.stringValue, value["developer_message"]?.stringValue, value["message"]?.stringValue]
                    .compactMap { $0 }.first
            } ?? answer.bodyExcerpt
        let message = "\(action): \(code) \(answer.status.reasonPhrase)" + (detail.isEmpty ? "" : " — \(detail)")
        switch code {
        case 401: return PlatformError(.notAuthenticated, message)
        case 403 where detail.lowercased().contains("quota"): return PlatformError(.quotaExceeded, message)
        case 403: return PlatformError(.forbidden, message)
        case 404, 410: return PlatformError(.notFound, message)
        case 429: return PlatformError(.rateLimited, message, retryAfter: answer.retryAfter)
        case 500...599: return PlatformError(.serverFailure, message, retryAfter: answer.retryAfter)
        default: return PlatformError(.invalidRequest, message)
        }
    }

    /// Whether the platform answered and refused the request (a 4xx status): it did nothing. A server error,
    /// a lost connection or an answer that cannot be read leave open whether it acted.
    var refusedRequest: Bool {
        switch kind {
        case .notAuthenticated, .quotaExceeded, .forbidden, .notFound, .rateLimited, .invalidRequest: true
        default: false
        }
    }

    /// The error for a transfer failure (network) or passes others through.
    package static func transfer(_ error: any Error) -> any Error {
        guard let upload = error as? UploadError else { return error }
        return PlatformError(upload.disposition.isRetryable ? .network : .invalidRequest, upload.message)
    }
}
