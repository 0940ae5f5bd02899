import AsyncHTTPClient
import Foundation
import HTTPTransport
import NIOConcurrencyHelpers
import NIOCore
import StageKit
import StageRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// A file being uploaded: its identity when the upload began, and bounded chunked reads of any range.
struct UploadFile: Sendable {
    /// What says a file is still the one an upload started with: its size and modification time, and a sampled
    /// hash of its content (``StageRuntime/ContentFingerprint``), so that a file made again with the same bytes
    /// (an encode repeated by a worker on another machine) still continues the upload.
    struct Fingerprint: Codable, Sendable, Hashable {
        var size: Int64
        var modified: Double
        /// Nil in checkpoints written before it was recorded.
        var content: String?
    }

    let path: String
    let fingerprint: Fingerprint

    /// Bytes read per chunk: 1 MiB keeps up with loopback and keeps memory flat.
    static let chunkSize = 1 << 20

    /// The error of a system call on `path` that failed just now: "cannot `doing` `path`: " and what `errno` says.
    static func failure(_ doing: String, _ path: String) -> StageFailure {
        StageFailure("cannot \(doing) \(path): \(String(cString: strerror(errno)))", kind: .invalidInput)
    }

    init(path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw Self.failure("read", path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw StageFailure("\(path) is not a regular file", kind: .invalidInput)
        }
        self.path = path
        let size = Int64(info.st_size)
        do {
            self.fingerprint = Fingerprint(
                size: size, modified: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9,
                content: try ContentFingerprint.compute(path: path, size: size, method: .sampled))
        } catch {
            throw StageFailure(error.message, kind: .invalidInput)
        }
    }

    /// A file still being written (an export that an upload streams): read only where its writer says the bytes
    /// are final, so it has no fingerprint to check.
    init(growing path: String) {
        self.path = path
        fingerprint = Fingerprint(size: 0, modified: 0, content: nil)
    }

    var size: Int64 { fingerprint.size }

    /// Whether the file differs from the one an upload recorded: another size, or another modification time
    /// and content.
    func changed(since recorded: Fingerprint) -> Bool {
        guard recorded.size == fingerprint.size else { return true }
        guard recorded.modified != fingerprint.modified else { return false }
        return recorded.content == nil || recorded.content != fingerprint.content
    }

    /// Fails when the file changed since an upload recorded its fingerprint: resuming would corrupt it.
    func check(against recorded: Fingerprint?) throws {
        guard let recorded, changed(since: recorded) else { return }
        throw StageFailure(
            "\(path) changed since its upload began (size \(recorded.size) → \(fingerprint.size), or modified); "
                + "the partial upload cannot be completed with different bytes. Rerun with --fresh to upload it anew",
            kind: .invalidInput)
    }

    /// The bytes of `range` as a stream of chunks, each read when asked for.
    func chunks(_ range: Range<Int64>) -> FileChunks {
        FileChunks(path: path, range: range)
    }

    /// Hands the bytes of `range` to `update` a chunk at a time (a digest, which is done with a chunk when `update`
    /// returns), all read into one buffer. ``chunks(_:)`` reads into three in turn, since a request body's client
    /// may still hold two chunks when it asks for the next; an upload digests parts while it sends others, and
    /// with three 1 MiB buffers per digest those were most of a streamed upload's own memory.
    func digest(_ range: Range<Int64>, _ update: (UnsafeRawBufferPointer) -> Void) async throws {
        var chunks = FileChunks.AsyncIterator(path: path, range: range, buffers: 1)
        while let chunk = try await chunks.next() {
            try Task.checkCancellation()
            chunk.withUnsafeReadableBytes(update)
        }
    }

    /// The bytes of `range` as the body of `request`. To a server on this machine, chunks the connection's
    /// event loop reads itself: on loopback the receiver shares this machine's cores, and a page sent with
    /// sendfile cost nginx's worker almost twice what a written one did. Elsewhere, file regions when the
    /// connection can carry them (the cheapest for this process), else chunks read into memory.
    func body(_ range: Range<Int64>, for request: HTTPClientRequest) -> FileBody {
        if request.reachesThisMachine { return .local(chunks(range).immediate()) }
        return request.carriesFileRegions
            ? .regions(FileRegions(path: path, range: range)) : .chunks(BufferedBody(chunks(range)))
    }

    /// The error of a file that ends before a range that was in it when the upload began.
    static func shrank(_ path: String) -> StageFailure {
        StageFailure("\(path) is shorter than expected: it changed during the upload", kind: .invalidInput)
    }
}

/// A file range as an async sequence of `ByteBuffer`s of ``UploadFile/chunkSize``: the input of a checksum, or
/// a request body over TLS (``HTTPTransport/HTTPExchange/send(_:streaming:length:meter:doing:)`` reads it only
/// as fast as the socket takes it).
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let path: String
    let range: Range<Int64>

    /// An open descriptor, closed when the last iterator copy holding it goes away (also when the
    /// HTTP client abandons the body half way).
    final class OpenFile: Sendable {
        let descriptor: Int32

        init(path: String) throws {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw UploadFile.failure("open", path) }
        }

        deinit {
            close(descriptor)
        }
    }

    /// A buffer chunks are read into, used again when its turn comes round (``AsyncIterator``). Reading into fresh
    /// memory costs a page fault per 4 KiB, and at loopback speed that was a fifth of an upload's CPU time. When a
    /// chunk's turn comes again, its reader has long released it (a streamed body's HTTP client holds at most two
    /// chunks, a digest one); if something still holds it, `clear()` gives the slot new memory and the holder keeps
    /// its bytes.
    final class RecycledBuffer: Sendable {
        let buffer = NIOLockedValueBox(ByteBuffer())

        /// Fills the buffer with `count` bytes of `file` from `offset` and returns it (sharing its storage).
        func read(_ count: Int, of file: OpenFile, at offset: Int64, path: String) throws -> ByteBuffer {
            try buffer.withLockedValue { buffer in
                buffer.clear(minimumCapacity: count)
                try FileChunks.read(count, of: file, at: offset, path: path, into: &buffer)
                return buffer
            }
        }
    }

    /// Appends `count` bytes of `file` from `offset` to `buffer`; fails when the file ends before.
    static func read(_ count: Int, of file: OpenFile, at offset: Int64, path: String, into buffer: inout ByteBuffer)
        throws
    {
        let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
            Swift.max(0, pread(file.descriptor, pointer.baseAddress, count, off_t(offset)))
        }
        guard read == count else { throw UploadFile.shrank(path) }
    }

    /// The range read by whoever asks, a part at a time and at once (``HTTPTransport/ImmediateParts``).
    /// Parts are 128 KiB: a part is read and written on one thread, and one this small is still in that
    /// core's cache when the kernel copies it to the socket (1 MiB parts cost the kernel 0.3 s more per GiB).
    ///
    /// The body that owns them closes the file when the request is over (``close()``): a request that fails
    /// half way may never ask for the next part.
    final class Immediate: ImmediateParts {
        static let partSize = 128 << 10
        let chunks: FileChunks
        private let state: NIOLockedValueBox<(file: OpenFile?, offset: Int64, closed: Bool)>

        init(_ chunks: FileChunks) {
            self.chunks = chunks
            state = NIOLockedValueBox((nil, chunks.range.lowerBound, false))
        }

        func next() throws -> IOData? {
            let (path, end) = (chunks.path, chunks.range.upperBound)
            return try state.withLockedValue { state in
                if state.closed { throw CancellationError() }
                guard state.offset < end else {
                    state.file = nil
                    return nil
                }
                let file = try state.file ?? OpenFile(path: path)
                state.file = file
                let count = Int(Swift.min(Int64(Self.partSize), end - state.offset))
                var buffer = ByteBufferAllocator().buffer(capacity: count)
                try FileChunks.read(count, of: file, at: state.offset, path: path, into: &buffer)
                state.offset += Int64(count)
                return .byteBuffer(buffer)
            }
        }

        /// Closes the file; later parts fail.
        func close() {
            state.withLockedValue { state in
                state.file = nil
                state.closed = true
            }
        }
    }

    /// The range as parts the connection's event loop reads itself.
    func immediate() -> Immediate {
        Immediate(self)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let path: String
        var offset: Int64
        let end: Int64
        var file: OpenFile?
        /// Used in turn: a buffer handed out comes back after the others. A request body needs three (its client
        /// may still hold two chunks when it asks for the next); a reader done with each chunk before the next,
        /// one.
        let buffers: [RecycledBuffer]
        var turn = 0

        init(path: String, range: Range<Int64>, buffers: Int) {
            (self.path, offset, end) = (path, range.lowerBound, range.upperBound)
            self.buffers = (0..<buffers).map { _ in RecycledBuffer() }
        }

        mutating func next() async throws -> ByteBuffer? {
            guard offset < end else {
                file = nil
                return nil
            }
            let source = try file ?? OpenFile(path: path)
            file = source
            let wanted = Int(Swift.min(Int64(UploadFile.chunkSize), end - offset))
            let (start, path, recycled) = (offset, self.path, buffers[turn])
            turn = (turn + 1) % buffers.count
            // The read blocks (page cache or disk): it runs on BlockingWork, not on the cooperative pool.
            let buffer = try await BlockingWork.run {
                try recycled.read(wanted, of: source, at: start, path: path)
            }
            offset += Int64(wanted)
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(path: path, range: range, buffers: 3)
    }
}
