import StageKit

/// An error from starting, running or stopping the sandbox itself (not an HTTP error answered to a
/// client: those are responses).
public struct SandboxError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; new codes may be added without breaking callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: Sendable, Hashable {
            case dataFolder
            case index
            case startup
        }

        private let value: Value

        /// The data folder could not be created or written.
        public static let dataFolder = Code(value: .dataFolder)
        /// The JSON index in the data folder could not be read or written.
        public static let index = Code(value: .index)
        /// The server could not start listening.
        public static let startup = Code(value: .startup)

        /// A short name of the code.
        public var description: String {
            switch self.value {
            case .dataFolder: "dataFolder"
            case .index: "index"
            case .startup: "startup"
            }
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A message for people.
    public var message: String
    /// The underlying error, if any.
    public var cause: (any Error)?

    /// Creates an error.
    public init(code: Code, message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The message, followed by the cause when there is one.
    public var description: String {
        if let cause {
            return "\(self.message): \(cause)"
        }
        return self.message
    }
}
