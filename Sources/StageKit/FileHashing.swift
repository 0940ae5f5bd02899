package import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Hashing parts of a file a MiB per read: Foundation's `FileHandle.read(upToCount:)` reads in 4 KiB system calls,
/// 256 of them per MiB.
package enum FileHashing {
    /// A range of a file: `length` bytes from `offset`, or every byte from `offset` to the end when `length` is nil.
    package typealias Range = (offset: Int64, length: Int64?)

    /// Feeds the bytes of `ranges` of the file at `path`, in order, to `hasher`. Throws `failure` with what went
    /// wrong (the system's reason, or that the file ended inside a range of known length).
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
