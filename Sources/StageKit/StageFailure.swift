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

/// What kind of failure an error is, for machines: `--json` events, state and reports carry it as a
/// string (`"quota-exceeded"`), so a script can tell a full account from a flaky network.
///
/// A struct rather than an enum, so that stages may add kinds of their own (`ErrorKind("acme-license")`) and
/// new kinds never break a `switch`.
public struct ErrorKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The kind as it appears in JSON.
    public let rawValue: String

    /// A kind of your own; use lower-case words joined by `-`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A kind of your own; use lower-case words joined by `-`.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// The network failed: refused, reset, timed out.
    public static let network = ErrorKind("network")
    /// A server failed (5xx).
    public static let serverFailure = ErrorKind("server-failure")
    /// Too many requests (429).
    public static let rateLimited = ErrorKind("rate-limited")
    /// Credentials are missing or expired (401).
    public static let notAuthenticated = ErrorKind("not-authenticated")
    /// Credentials are valid but may not do this (403).
    public static let forbidden = ErrorKind("forbidden")
    /// The account or the disk has no room.
    public static let quotaExceeded = ErrorKind("quota-exceeded")
    /// The remote object does not exist (404, 410).
    public static let notFound = ErrorKind("not-found")
    /// The server refused the request (other 4xx).
    public static let invalidRequest = ErrorKind("invalid-request")
    /// The answer does not match the documented API.
    public static let invalidResponse = ErrorKind("invalid-response")
    /// The input cannot be used: missing, unreadable, corrupt or unsupported media.
    public static let invalidInput = ErrorKind("invalid-input")
    /// The input claims to be media (by its name) but FFmpeg cannot read it, or it decodes short of the duration
    /// its container declares: a truncated copy, a damaged file (``DamagedInputPolicy``).
    public static let damagedInput = ErrorKind("damaged-input")
    /// The item would write a file that another item writes (or claims, queued in a shared batch): refused before
    /// any of its stages runs, naming the other item and the path.
    public static let outputCollision = ErrorKind("output-collision")
    /// The stage's options are wrong in a way only running shows.
    public static let invalidOptions = ErrorKind("invalid-options")
    /// An attempt ran longer than the stage's `timeout`.
    public static let timeout = ErrorKind("timeout")
    /// An external command failed.
    public static let commandFailed = ErrorKind("command-failed")
    /// The state store cannot be read or written.
    public static let state = ErrorKind("state")
    /// The workers running the item in a shared batch died each time (killed, crashed, out of memory) until the
    /// takeover limit (`pipeline worker --abandon-after`) gave it up.
    public static let abandoned = ErrorKind("abandoned")
    /// Anything not classified.
    public static let failed = ErrorKind("failed")
}

/// An error that tells the runner whether to retry, and what kind of failure it is. Errors that do not
/// conform are fatal, of kind ``ErrorKind/failed``.
public protocol ClassifiedError: Error {
    /// Whether trying again can help.
    var disposition: FailureDisposition { get }
    /// What kind of failure it is.
    var kind: ErrorKind { get }
}

extension ClassifiedError {
    /// Unclassified unless the error says otherwise.
    public var kind: ErrorKind { .failed }
}

/// A stage failure with a message for people: the error most stages throw.
public struct StageFailure: ClassifiedError, Sendable, CustomStringConvertible {
    /// What went wrong and, where possible, what to do.
    public var message: String
    /// Whether trying again can help.
    public var disposition: FailureDisposition
    /// What kind of failure it is.
    public var kind: ErrorKind

    /// Creates a failure; fatal unless said otherwise.
    public init(_ message: String, kind: ErrorKind = .failed, disposition: FailureDisposition = .fatal) {
        self.message = message
        self.kind = kind
        self.disposition = disposition
    }

    /// A transient failure worth retrying.
    public static func retryable(_ message: String, kind: ErrorKind = .failed, after delay: Duration? = nil)
        -> StageFailure
    {
        StageFailure(message, kind: kind, disposition: .retryable(after: delay))
    }

    /// Resolved options that break their declaration or the stage's rules, as `pipeline validate` words it.
    package static func invalidOptions(_ problems: [OptionProblem]) -> StageFailure {
        let described = problems.map { problem in
            "invalid option \(JSONPath(components: [.key("with")] + problem.path.components)): \(problem.message)"
        }
        return StageFailure(described.joined(separator: "; "), kind: .invalidOptions)
    }

    /// Options that do not decode into the stage's `Options` (read with `schema`, whose groups the path leaves
    /// out).
    package static func invalidOptions(_ error: DecodingError, in schema: OptionSchema) -> StageFailure {
        let (path, reason): ([any CodingKey], String)
        switch error {
        case .typeMismatch(let type, let context): (path, reason) = (context.codingPath, "expected \(type)")
        case .valueNotFound(_, let context): (path, reason) = (context.codingPath, "a value is missing")
        case .keyNotFound(let key, let context):
            (path, reason) = (context.codingPath + [key], "this option is required")
        case .dataCorrupted(let context): (path, reason) = (context.codingPath, context.debugDescription)
        @unknown default: (path, reason) = ([], "\(error)")
        }
        let where_ = schema.flattening(path).map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return StageFailure("invalid option with\(where_): \(reason)", kind: .invalidOptions)
    }

    public var description: String { message }
}

/// A stage that ran longer than its `timeout`: the engine throws it, a stage never does.
package struct StageTimeout: ClassifiedError, Sendable, CustomStringConvertible {
    /// The limit that was exceeded.
    package var limit: TimeSpan

    /// Creates the error for an attempt that exceeded `limit`.
    package init(limit: TimeSpan) {
        self.limit = limit
    }

    package var disposition: FailureDisposition { .retryable() }
    package var kind: ErrorKind { .timeout }
    package var description: String { "timed out after \(limit)" }
}
