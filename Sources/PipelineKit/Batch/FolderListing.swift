import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The names in one folder, read once, with what sidecar matching needs to know about them.
struct FolderListing: Sendable {
    /// The folder's absolute path.
    let path: String
    /// Its path relative to the input folder ("" for the input folder itself).
    let prefix: String
    /// The names of its entries, without `.` and `..`.
    let names: [String]
    /// Every name, when the folder holds a JSON file (a possible sidecar); empty otherwise.
    let siblings: Set<String>
    /// The non-JSON names by stem (for `clip.json` → `clip.mp4`), when the folder holds a JSON file.
    let byStem: [Substring: String]
    /// The open folder, whose entries are stat'ed relative to it (no walk of the whole path per entry).
    fileprivate let descriptor: Int32

    /// How many entries one thread looks at in a go.
    private static let entriesPerTask = 256

    /// Lists the folder at `path`; throws the reason it cannot be listed.
    init(path: String, prefix: String) throws(SystemCallError) {
        guard let directory = opendir(path) else { throw SystemCallError(code: errno) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        // The stream's descriptor is closed with it: a copy outlives `closedir`.
        descriptor = fcntl(dirfd(directory), F_DUPFD_CLOEXEC, 0)
        closedir(directory)
        guard descriptor >= 0 else { throw SystemCallError(code: errno) }
        self.path = path
        self.prefix = prefix
        self.names = names
        // Sidecars are JSON files: a folder without one needs neither the set of its names nor the files by stem.
        let hasJSON = names.contains { $0.hasSuffix(".json") }
        siblings = hasJSON ? Set(names) : []
        byStem =
            hasJSON
            ? Dictionary(
                names.filter { !$0.hasSuffix(".json") }.map { (InputDiscovery.stem(of: $0), $0) },
                uniquingKeysWith: min)
            : [:]
    }

    /// For each listing, each entry's `transform`, in the order of its ``names``, given the entry's stat data
    /// (following links) or the error of `fstatat`. Entries are stat'ed by several threads at once, a block of
    /// names each; the blocks of all the listings are shared by the threads, so a large folder beside small ones
    /// is still stat'ed by all of them.
    static func entries<T: Sendable>(
        of listings: [FolderListing], _ transform: @Sendable (FolderListing, String, Result<stat, SystemCallError>) -> T
    ) -> [[T]] {
        let blocks = listings.indices.flatMap { folder in
            stride(from: 0, to: listings[folder].names.count, by: entriesPerTask).map { (folder: folder, start: $0) }
        }
        let buffers = listings.map { UnsafeMutableBufferPointer<T>.allocate(capacity: $0.names.count) }
        // Each slot is written once, by the one thread that owns its block.
        nonisolated(unsafe) let slots = buffers
        DispatchQueue.concurrentPerform(iterations: blocks.count) { number in
            let (listing, start) = (listings[blocks[number].folder], blocks[number].start)
            for index in start..<min(start + entriesPerTask, listing.names.count) {
                var info = stat()
                let found: Result<stat, SystemCallError> =
                    fstatat(listing.descriptor, listing.names[index], &info, 0) == 0
                    ? .success(info) : .failure(SystemCallError(code: errno))
                slots[blocks[number].folder].initializeElement(
                    at: index, to: transform(listing, listing.names[index], found))
            }
        }
        return buffers.map { buffer in
            defer { buffer.deallocate() }
            return [T](unsafeUninitializedCapacity: buffer.count) { array, initialized in
                initialized = array.moveInitialize(fromContentsOf: buffer)
            }
        }
    }
}

extension FolderListing {
    /// Closes the folder; its entries cannot be looked at any more.
    func close() {
        _ = Glibc.close(descriptor)
    }
}

/// Where a folder is on disk: a folder reached again (through a link) is not scanned twice.
struct FolderIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// A failed system call: its `errno`.
struct SystemCallError: Error, CustomStringConvertible {
    /// The `errno` of the failed call.
    var code: Int32
    var description: String { String(cString: strerror(code)) }
}
