import Foundation
public import StageKit

#if canImport(Glibc)
    import Glibc
#endif

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
