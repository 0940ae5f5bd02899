import Crypto
import Foundation
import NIOCore
import StageKit

/// The digests of a file sent in one PutObject: its MD5, which S3 gives such an object as its ETag (so a HEAD
/// tells whether the object already holds these bytes), and the stage's checksum of the whole body.
struct ObjectDigests: Sendable, Equatable {
    /// Lowercase hexadecimal, as in an ETag.
    var md5: String
    /// The MD5 as `Content-MD5` carries it.
    var md5Base64: String
    /// The `x-amz-checksum-…` value; nil with `checksum: none`.
    var checksum: String?

    /// Reads `file` once, computing its MD5 and the checksum named `checksum` (`crc32c`, `sha256` or `none`).
    init(of file: UploadFile, checksum: String) async throws {
        var md5 = Insecure.MD5()
        var crc = CRC32C()
        var sha = SHA256()
        try await file.digest(0..<file.size) { bytes in
            md5.update(bufferPointer: bytes)
            switch checksum {
            case "crc32c": crc.update(bytes)
            case "sha256": sha.update(bufferPointer: bytes)
            default: break
            }
        }
        let digest = Array(md5.finalize())
        self.md5 = HexDigest.text(digest)
        md5Base64 = Data(digest).base64EncodedString()
        switch checksum {
        case "crc32c": self.checksum = Data(crc.bytes).base64EncodedString()
        case "sha256": self.checksum = Data(sha.finalize()).base64EncodedString()
        default: self.checksum = nil
        }
    }

    /// The MD5 an ETag may be (32 hexadecimal digits, quoted or not); nil for the ETag of a multipart object
    /// (`…-3`). An object encrypted with KMS has an ETag of this form that is not its MD5: it never matches a
    /// file's MD5, so such a file is sent again rather than taken as uploaded.
    static func md5(ofETag etag: String) -> String? {
        let text = etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
        guard text.count == 32, text.allSatisfy(\.isHexDigit) else { return nil }
        return text
    }
}
