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
/// item, whatever their names.
public enum ContentFingerprint {
    /// The most a sampled fingerprint reads: files up to this size are hashed whole.
    public static let sampleBudget = 4 << 20
    /// The size of one sampled block.
    static let blockSize = 256 << 10

    /// Fingerprints the file at `path`, whose size is `size`.
    public static func compute(path: String, size: Int64, method: FingerprintMethod) throws(InputError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw InputError(message: "cannot read \(path): \(String(cString: strerror(errno)))")
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
                    throw InputError(message: "cannot read \(path): \(reason)")
                }
                buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                offset += Int64(count)
                remaining -= count
            }
        }
        let digest = hasher.finalize().prefix(16).map { String(format: "%02x", $0) }.joined()
        return "\(method == .full || size <= Int64(sampleBudget) ? "full" : "sampled"):\(size):\(digest)"
    }
}

/// What a file looked like when it was fingerprinted (git's index does the same): while path, size,
/// modification time, inode and device are unchanged, the cached fingerprint stands and no byte is read.
public struct FileStamp: Sendable, Hashable, Codable {
    /// The absolute path.
    public var path: String
    /// The size in bytes.
    public var size: Int64
    /// The modification time in nanoseconds since 1970.
    public var modifiedNanoseconds: Int64
    /// The inode number.
    public var inode: Int64
    /// The device number.
    public var device: Int64

    /// Creates a stamp.
    public init(path: String, size: Int64, modifiedNanoseconds: Int64, inode: Int64, device: Int64) {
        self.path = path
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.inode = inode
        self.device = device
    }
}

/// A stamp with the fingerprint (and, once probed, the media facts) it led to.
public struct FingerprintCacheEntry: Sendable, Hashable {
    /// The file as it was.
    public var stamp: FileStamp
    /// How it was fingerprinted.
    public var method: FingerprintMethod
    /// The fingerprint.
    public var fingerprint: String
    /// What a media probe found, once a run needed it.
    public var media: MediaProbeResult?

    /// Creates an entry.
    public init(stamp: FileStamp, method: FingerprintMethod, fingerprint: String, media: MediaProbeResult? = nil) {
        self.stamp = stamp
        self.method = method
        self.fingerprint = fingerprint
        self.media = media
    }
}
