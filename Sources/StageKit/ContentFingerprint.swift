import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How an item's content is identified: `inputs.fingerprint` in a workflow.
public enum FingerprintMethod: String, Sendable, Hashable, Codable, CaseIterable {
    /// The size and a hash of sampled blocks (the start, the end and evenly spaced blocks between): at most
    /// ``ContentFingerprint/sampleBudget`` bytes are read, whatever the file's size.
    case sampled
    /// The size and a hash of every byte.
    case full
}

/// The identity of a file's content: `"<method>:<size>:<hash>"`. Two files with the same fingerprint are one
/// item, whatever their names. Engine-side (the ledger, output files, an upload's identity): not for stage authors.
package enum ContentFingerprint {
    /// The most a sampled fingerprint reads: files up to this size are hashed whole.
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
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ReadError(message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var hasher = SHA256()
        withUnsafeBytes(of: size.littleEndian) { hasher.update(bufferPointer: $0) }
        let ranges: [(offset: Int64, length: Int)]
        if method == .full || size <= Int64(sampleBudget) {
            ranges = [(0, Int(clamping: size))]
        } else {
            let blocks = sampleBudget / blockSize
            let stride = (size - Int64(blockSize)) / Int64(blocks - 1)
            ranges = (0..<blocks).map { (Int64($0) * stride, blockSize) }
        }
        if ranges.count > 1 {
            // Every sampled block is asked for at once: a disk serves the reads side by side instead of one seek
            // after another.
            for (start, length) in ranges {
                _ = posix_fadvise(descriptor, off_t(start), off_t(length), POSIX_FADV_WILLNEED)
            }
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        for (start, length) in ranges {
            var offset = start
            var remaining = length
            while remaining > 0 {
                let count = buffer.withUnsafeMutableBytes { raw in
                    pread(descriptor, raw.baseAddress, min(raw.count, remaining), off_t(offset))
                }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    let reason = count == 0 ? "it shrank while it was read" : String(cString: strerror(errno))
                    throw ReadError(message: "cannot read \(path): \(reason)")
                }
                buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                offset += Int64(count)
                remaining -= count
            }
        }
        let digest = HexDigest.text(hasher.finalize().prefix(16))
        return "\(method == .full || size <= Int64(sampleBudget) ? "full" : "sampled"):\(size):\(digest)"
    }
}
