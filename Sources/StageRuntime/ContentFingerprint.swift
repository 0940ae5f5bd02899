import Crypto
package import StageKit

/// The identity of a file's content: `"<method>:<size>:<hash>"`. Two files with the same fingerprint are one
/// item, whatever their names. Engine-side (the ledger, output files, an upload's identity): not for stage authors.
package enum ContentFingerprint {
    /// The most a sampled fingerprint reads (``StageKit/FingerprintMethod/sampled``): files up to this size are
    /// hashed whole.
    package static let sampleBudget = 4 << 20
    /// A file that could not be read.
    package struct ReadError: Error, Sendable, CustomStringConvertible {
        /// What happened, with the path.
        package var message: String
        package var description: String { message }
    }

    /// The size of one sampled block.
    static let blockSize = 256 << 10

    /// Fingerprints the file at `path`, whose size is `size`.
    package static func compute(path: String, size: Int64, method: FingerprintMethod) throws(ReadError) -> String {
        var hasher = SHA256()
        withUnsafeBytes(of: size.littleEndian) { hasher.update(bufferPointer: $0) }
        let ranges: [FileHashing.Range]
        if method == .full || size <= Int64(sampleBudget) {
            ranges = [(0, size)]
        } else {
            let blocks = sampleBudget / blockSize
            let stride = (size - Int64(blockSize)) / Int64(blocks - 1)
            ranges = (0..<blocks).map { (Int64($0) * stride, Int64(blockSize)) }
        }
        try FileHashing.update(&hasher, path: path, ranges: ranges) { ReadError(message: "cannot read \(path): \($0)") }
        let digest = HexDigest.text(hasher.finalize().prefix(16))
        return "\(method == .full || size <= Int64(sampleBudget) ? "full" : "sampled"):\(size):\(digest)"
    }
}
