/// A problem with the state folder: it cannot be written, is in use, or holds a damaged file.
public struct StateError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem, so callers can choose an exit code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: String { case io, busy, corrupt, incompatible, missing, leaseLost = "lease lost" }
        private let kind: Kind
        /// Reading or writing failed (permissions, disk full).
        public static let io = Code(kind: .io)
        /// Another process holds the state folder.
        public static let busy = Code(kind: .busy)
        /// A state file is damaged (truncated or edited by hand).
        public static let corrupt = Code(kind: .corrupt)
        /// A state file was written by a newer format.
        public static let incompatible = Code(kind: .incompatible)
        /// There is no state where a command that only reads or changes one expected it: a database without a
        /// shared batch (a typo in its name, say), in which such a command creates nothing.
        public static let missing = Code(kind: .missing)
        /// A worker's lease on an item was taken over by another worker: this worker may not write for it.
        public static let leaseLost = Code(kind: .leaseLost)
        public var description: String { kind.rawValue }
    }

    /// The kind of problem.
    public var code: Code
    /// What happened and what to do, for people.
    public var message: String
    /// The file or folder concerned.
    public var path: String

    public var description: String { message }

    /// Creates an error.
    public init(code: Code, message: String, path: String) {
        self.code = code
        self.message = message
        self.path = path
    }
}
