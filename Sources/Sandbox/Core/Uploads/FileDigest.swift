import Crypto
import NIOCore
import StageKit

/// SHA-256 of a stored upload, read in 1 MiB pieces so memory stays flat.
enum FileDigest {
    static func sha256Hex(path: String, length: Int64) async throws -> String {
        var hash = SHA256()
        try await UploadFile.with(path: path, forWriting: false) { file in
            var offset: Int64 = 0
            while offset < length {
                let count = Int(min(Int64(1 << 20), length - offset))
                let buffer = try await file.read(count: count, at: offset)
                guard buffer.readableBytes > 0 else { break }
                buffer.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
                offset += Int64(buffer.readableBytes)
            }
        }
        return HexDigest.text(hash.finalize())
    }
}
