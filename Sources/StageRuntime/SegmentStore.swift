import Crypto
package import Foundation
package import StageKit

/// Where the encoded segments of a transcode wait for the worker that joins them, when the workers that
/// encode them run on other machines: a folder they all share (``FolderSegmentStore``) or an S3 bucket.
///
/// A segment is stored under its key and its SHA-256, so the joining worker gets exactly the bytes that were
/// recorded, or an error: never a partial or a different file. Two workers that store the same segment (a
/// takeover after a stalled lease) do not overwrite each other's bytes, even when their encodes differ, and
/// ``remove(_:)`` clears every version of a segment.
///
/// Failures are ``SegmentStoreError``s: ``SegmentStoreError/Code/notFound`` and
/// ``SegmentStoreError/Code/hashMismatch`` tell the caller to encode that segment again; the others carry a
/// ``FailureDisposition`` like any stage error. A store does not retry by itself: the stage's retry policy
/// decides.
package protocol SegmentStore: Sendable {
    /// The store as people name it in options and logs (`s3://bucket/prefix`, a folder's path).
    var address: String { get }

    /// Stores `file` as the segment `key` whose SHA-256 (lowercase hex) is `sha256`. A reader never sees a part
    /// of it: the object appears whole or not at all. Storing the same segment again is harmless.
    func put(_ file: URL, as key: SegmentKey, sha256: String) async throws

    /// Copies the segment `key` stored with `sha256` to `destination`, which appears (written under a temporary
    /// name, synced, renamed) only once every byte was read and matches the hash. A segment that is not there
    /// throws ``SegmentStoreError/Code/notFound``; one whose bytes differ throws
    /// ``SegmentStoreError/Code/hashMismatch``; either way nothing is left at `destination`.
    func fetch(_ key: SegmentKey, sha256: String, to destination: URL) async throws

    /// Whether the segment `key` is stored with `sha256`, without reading it: a worker that finds it there
    /// need not encode it again.
    func contains(_ key: SegmentKey, sha256: String) async throws -> Bool

    /// Removes every stored version of these segments, once they are joined; segments that are not there are
    /// not an error.
    func remove(_ keys: [SegmentKey]) async throws
}

/// The segment store of a run in ``StageContext/services``; without one, a transcode keeps its segments in its
/// scratch folder.
package enum SegmentStoreKey: ServiceKey {
    /// The store.
    package typealias Value = any SegmentStore
}

/// Names one segment of one plan: `plan` identifies the encode (a digest of the source's fingerprint and the
/// settings, see ``planID(digesting:)``), `unit` the piece of it (`video-0007`, `audio`).
///
/// Both are made of ASCII letters, digits, `-` and `_` (1 to 128 of them), so that a key is a safe file name
/// and object key everywhere and the SHA-256 can follow the unit after a dot.
package struct SegmentKey: Sendable, Hashable, CustomStringConvertible {
    /// The encode the segment belongs to.
    package let plan: String
    /// The segment within the encode.
    package let unit: String

    /// A key; throws ``SegmentStoreError/Code/invalidKey`` unless both parts are 1 to 128 ASCII letters,
    /// digits, `-` or `_`.
    package init(plan: String, unit: String) throws(SegmentStoreError) {
        for (name, value) in [("plan", plan), ("unit", unit)] where !Self.isValidPart(value) {
            throw SegmentStoreError(
                code: .invalidKey,
                message: "invalid segment \(name) \"\(value)\": use 1 to 128 ASCII letters, digits, - or _")
        }
        self.plan = plan
        self.unit = unit
    }

    /// A plan id for an encode: the SHA-256 (lowercase hex, first 32 digits) of `components`, such as the
    /// source's content fingerprint and the settings' canonical JSON. Each component is length-prefixed, so
    /// `["ab", "c"]` and `["a", "bc"]` give different ids.
    package static func planID(digesting components: [String]) -> String {
        var hasher = SHA256()
        for component in components {
            withUnsafeBytes(of: UInt64(component.utf8.count).littleEndian) { hasher.update(bufferPointer: $0) }
            hasher.update(data: Data(component.utf8))
        }
        return String(HexDigest.text(hasher.finalize()).prefix(32))
    }

    package var description: String { "\(plan)/\(unit)" }

    /// Where the version of the segment with `sha256` lives under a store's root or prefix.
    package func relativePath(sha256: String) -> String {
        "\(plan)/\(unit).\(sha256)"
    }

    /// Whether `name`, a file or object name in the plan's folder, is a version of this segment or a partial
    /// one still being written (``VerifiedFile``).
    package func names(_ name: String) -> Bool {
        name.hasPrefix("\(unit).") || name.hasPrefix(".\(unit).")
    }

    private static func isValidPart(_ value: String) -> Bool {
        (1...128).contains(value.utf8.count)
            && value.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                    || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: "_")
            }
    }

    /// `sha256` in lowercase; throws ``SegmentStoreError/Code/invalidKey`` unless it is 64 hex digits.
    package static func normalizedHash(_ sha256: String) throws(SegmentStoreError) -> String {
        let lowered = sha256.lowercased()
        guard lowered.utf8.count == 64, lowered.utf8.allSatisfy({ Self.hexDigits.contains($0) }) else {
            throw SegmentStoreError(
                code: .invalidKey, message: "invalid SHA-256 \"\(sha256)\": expected 64 hexadecimal digits")
        }
        return lowered
    }

    private static let hexDigits = Set("0123456789abcdef".utf8)
}

/// A segment store's failure, with a code the caller can act on: encode the segment again after
/// ``Code/notFound`` or ``Code/hashMismatch``, retry after a retryable ``Code/transfer``.
package struct SegmentStoreError: ClassifiedError, Sendable, CustomStringConvertible {
    /// What went wrong, for code. A struct rather than an enum, so codes can be added without breaking a
    /// `switch`.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case notFound = "not found"
            case hashMismatch = "hash mismatch"
            case invalidKey = "invalid key"
            case invalidAddress = "invalid address"
            case tooLarge = "too large"
            case storage = "storage"
            case transfer = "transfer"
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// The store has no such segment (with that hash): encode it again.
        package static let notFound = Code(.notFound)
        /// The bytes do not match the SHA-256 they were stored or put with: encode the segment again.
        package static let hashMismatch = Code(.hashMismatch)
        /// A key part or a hash that a store cannot use.
        package static let invalidKey = Code(.invalidKey)
        /// A store address that names no store this program can open.
        package static let invalidAddress = Code(.invalidAddress)
        /// A file larger than the store accepts in one object.
        package static let tooLarge = Code(.tooLarge)
        /// A local file or the shared folder could not be read or written.
        package static let storage = Code(.storage)
        /// The remote store failed or refused a request; the disposition says whether retrying can help.
        package static let transfer = Code(.transfer)

        package var description: String { value.rawValue }
    }

    /// What went wrong.
    package var code: Code
    /// What happened, for people.
    package var message: String
    /// Whether trying again can help.
    package var disposition: FailureDisposition
    /// The error behind this one, when there is one (a classified transfer failure, for instance).
    package var cause: (any Error)?

    /// An error with a message; fatal unless said otherwise.
    package init(code: Code, message: String, disposition: FailureDisposition = .fatal, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.disposition = disposition
        self.cause = cause
    }

    /// The kind of the cause when it has one, else the code's.
    package var kind: ErrorKind {
        if let classified = cause as? any ClassifiedError { return classified.kind }
        switch code {
        case .notFound: return .notFound
        case .hashMismatch: return .invalidResponse
        case .invalidKey, .invalidAddress: return .invalidOptions
        case .tooLarge: return .invalidInput
        default: return disposition.isRetryable ? .network : .failed
        }
    }

    package var description: String { message }
}
