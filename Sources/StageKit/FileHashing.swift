package import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The SHA-256 of a file, or of parts of it, read a MiB per system call (Foundation's `FileHandle.read(upToCount:)`
/// reads in 4 KiB calls, 256 of them per MiB).
///
/// Hashing blocks its thread: call it through ``BlockingWork/run(_:)``, a part at a time, so that a stage checks for
/// cancellation between parts (``Stage/run(_:context:)`` says how often):
///
/// ```swift
/// let digest = try await BlockingWork.run {
///     try FileHashing.sha256(path: path, ranges: [(offset: offset, length: partSize)])
/// }
/// let text = HexDigest.text(digest)  // 64 lowercase hex digits
/// ```
public enum FileHashing {
    /// A range of a file: `length` bytes from `offset`, or every byte from `offset` to the end when `length` is nil.
    public typealias Range = (offset: Int64, length: Int64?)

    /// The SHA-256 of the bytes of `ranges` of the file at `path`, read in order (default: the whole file); 32 bytes,
    /// which ``HexDigest/text(_:)`` spells as text.
    ///
    /// A range of known length that runs past the end of the file fails: the file is shorter than its caller
    /// thought, or shrank while it was read. A range whose `length` is nil ends at the end of the file.
    ///
    /// - Throws: a fatal ``StageFailure`` of kind ``ErrorKind/invalidInput`` that names the file and says what went
    ///   wrong (the system's reason, or that the file ended inside a range).
    public static func sha256(path: String, ranges: [Range] = [(offset: 0, length: nil)]) throws(StageFailure)
        -> [UInt8]
    {
        var hasher = SHA256()
        try update(&hasher, path: path, ranges: ranges) { reason in
            StageFailure("cannot read \(path): \(reason)", kind: .invalidInput)
        }
        return Array(hasher.finalize())
    }

    /// Feeds the bytes of `ranges` of the file at `path`, in order, to `hasher`. Throws `failure` with what went
    /// wrong (the system's reason, or that the file ended inside a range of known length).
    ///
    /// `package`, not public: its hasher is swift-crypto's `SHA256`, which would make swift-crypto part of StageKit's
    /// public API. Stage authors use ``sha256(path:ranges:)``.
    package static func update<Failure: Error>(
        _ hasher: inout SHA256, path: String, ranges: [Range], failure: (String) -> Failure
    ) throws(Failure) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        if ranges.count > 1 {
            // Every range is asked for at once: a disk serves the reads side by side instead of one seek after another.
            for range in ranges {
                _ = posix_fadvise(descriptor, off_t(range.offset), off_t(range.length ?? 0), POSIX_FADV_WILLNEED)
            }
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        for range in ranges {
            var offset = range.offset
            var remaining = range.length ?? .max
            while remaining > 0 {
                let wanted = Int(min(Int64(buffer.count), remaining))
                let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, wanted, off_t(offset)) }
                if count < 0, errno == EINTR { continue }
                if count == 0, range.length == nil { break }
                guard count > 0 else {
                    throw failure(count == 0 ? "it shrank while it was read" : String(cString: strerror(errno)))
                }
                buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                offset += Int64(count)
                remaining -= Int64(count)
            }
        }
    }
}
