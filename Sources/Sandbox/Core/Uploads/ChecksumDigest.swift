import Crypto
import Foundation
import HTTPTypes
import NIOCore
import StageKit

/// A running digest for tus's checksum extension (`Upload-Checksum: ALGORITHM BASE64`).
enum ChecksumDigest: Sendable {
    case sha1(Insecure.SHA1)
    case sha256(SHA256)
    case md5(Insecure.MD5)

    /// The algorithms advertised in `Tus-Checksum-Algorithm`.
    static let algorithms = "sha1,sha256,md5"

    /// Parses an `Upload-Checksum` header into a fresh digest and the expected bytes.
    /// Throws 400 for a malformed header or an unsupported algorithm.
    static func parse(_ header: String) throws -> (digest: ChecksumDigest, expected: [UInt8]) {
        let parts = header.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, let expected = Data(base64Encoded: String(parts[1])) else {
            throw UploadFailure(.badRequest, "Upload-Checksum must be `ALGORITHM BASE64`.")
        }
        switch parts[0].lowercased() {
        case "sha1": return (.sha1(Insecure.SHA1()), Array(expected))
        case "sha256": return (.sha256(SHA256()), Array(expected))
        case "md5": return (.md5(Insecure.MD5()), Array(expected))
        default:
            throw UploadFailure(.badRequest, "Unsupported checksum algorithm; use one of \(Self.algorithms).")
        }
    }

    mutating func update(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { bytes in
            switch self {
            case .sha1(var hash):
                hash.update(bufferPointer: bytes)
                self = .sha1(hash)
            case .sha256(var hash):
                hash.update(bufferPointer: bytes)
                self = .sha256(hash)
            case .md5(var hash):
                hash.update(bufferPointer: bytes)
                self = .md5(hash)
            }
        }
    }

    func finalize() -> [UInt8] {
        switch self {
        case .sha1(let hash): Array(hash.finalize())
        case .sha256(let hash): Array(hash.finalize())
        case .md5(let hash): Array(hash.finalize())
        }
    }
}
