import Foundation
public import StageKit

/// A platform step that failed without an HTTP failure behind it, in terms a user can act on (after
/// Newzulu's taxonomy): options that cannot work, an answer whose content is not the documented API, a
/// platform that reports a failed upload. Failed HTTP exchanges are ``HTTPTransport/HTTPFailure``s, classified
/// by their status and refined by the platform's own error codes (``HTTPFailure/platform(_:doing:)``).
public struct PlatformError: ClassifiedError, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public var kind: ErrorKind
    /// What happened.
    public var message: String

    public var disposition: FailureDisposition {
        switch kind {
        case .network, .serverFailure, .rateLimited: .retryable()
        case .notAuthenticated: .credentialsExpired
        default: .fatal
        }
    }

    public var description: String { "\(kind.rawValue.replacingOccurrences(of: "-", with: " ")): \(message)" }

    /// Creates an error.
    public init(_ kind: ErrorKind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}
