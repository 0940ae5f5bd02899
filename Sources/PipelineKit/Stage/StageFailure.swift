/// Whether trying again can help.
public enum FailureDisposition: Sendable, Hashable {
    /// A transient problem (network, 5xx, a busy resource); `after` asks for a minimum wait (Retry-After).
    case retryable(after: Duration? = nil)
    /// Retrying cannot help (bad input, refused credentials, a missing file).
    case fatal
    /// The credentials expired (401): the runner renews them through the stage's `refreshWith` stage and
    /// tries again; without one the failure is fatal.
    case credentialsExpired

    /// Whether this is ``retryable(after:)``.
    public var isRetryable: Bool {
        if case .retryable = self { return true }
        return false
    }
}

/// An error that tells the runner whether to retry. Errors that do not conform are fatal.
public protocol ClassifiedError: Error {
    /// Whether trying again can help.
    var disposition: FailureDisposition { get }
}

/// A stage failure with a message for people: the error most stages throw.
public struct StageFailure: ClassifiedError, Sendable, CustomStringConvertible {
    /// What went wrong and, where possible, what to do.
    public var message: String
    /// Whether trying again can help.
    public var disposition: FailureDisposition

    /// Creates a failure; fatal unless said otherwise.
    public init(_ message: String, disposition: FailureDisposition = .fatal) {
        self.message = message
        self.disposition = disposition
    }

    /// A transient failure worth retrying.
    public static func retryable(_ message: String, after delay: Duration? = nil) -> StageFailure {
        StageFailure(message, disposition: .retryable(after: delay))
    }

    /// Options that do not decode into the stage's `Options`.
    static func invalidOptions(_ error: DecodingError) -> StageFailure {
        let (path, reason): ([any CodingKey], String)
        switch error {
        case .typeMismatch(let type, let context): (path, reason) = (context.codingPath, "expected \(type)")
        case .valueNotFound(_, let context): (path, reason) = (context.codingPath, "a value is missing")
        case .keyNotFound(let key, let context):
            (path, reason) = (context.codingPath + [key], "this option is required")
        case .dataCorrupted(let context): (path, reason) = (context.codingPath, context.debugDescription)
        @unknown default: (path, reason) = ([], "\(error)")
        }
        let where_ = path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return StageFailure("invalid option with\(where_): \(reason)")
    }

    public var description: String { message }
}

/// A stage that ran longer than its `timeout`.
public struct StageTimeout: ClassifiedError, Sendable, CustomStringConvertible {
    /// The limit that was exceeded.
    public var limit: TimeSpan

    public var disposition: FailureDisposition { .retryable() }
    public var description: String { "timed out after \(limit)" }
}
