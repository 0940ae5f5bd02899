import HTTPTransport
import NIOConcurrencyHelpers
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// A file range as a request body: chunks the event loop reads to a server on this machine, file regions over
/// plain HTTP, chunks read into memory over TLS (see ``UploadFile/body(_:for:)``).
enum FileBody: StreamedBody {
    typealias Element = IOData

    case regions(FileRegions)
    case chunks(BufferedBody<FileChunks>)
    /// Chunks the event loop reads itself, or, when every part must wait for the bandwidth limit, awaits.
    case local(FileChunks.Immediate)

    func release() {
        switch self {
        case .regions(let regions): regions.release()
        case .local(let parts): parts.close()
        case .chunks: break
        }
    }

    func immediateParts() -> (any ImmediateParts)? {
        guard case .local(let parts) = self else { return nil }
        return parts
    }

    enum AsyncIterator: AsyncIteratorProtocol {
        case regions(FileRegions.AsyncIterator)
        case chunks(BufferedBody<FileChunks>.AsyncIterator)

        mutating func next() async throws -> IOData? {
            switch self {
            case .regions(var parts):
                defer { self = .regions(parts) }
                return try await parts.next()
            case .chunks(var parts):
                defer { self = .chunks(parts) }
                return try await parts.next()
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        switch self {
        case .regions(let regions): .regions(regions.makeAsyncIterator())
        case .chunks(let chunks): .chunks(chunks.makeAsyncIterator())
        case .local(let parts): .chunks(BufferedBody(parts.chunks).makeAsyncIterator())
        }
    }
}

/// A file range as file regions of ``UploadFile/chunkSize``: the body of a request over plain HTTP. The kernel
/// sends each region from the page cache to the socket (sendfile), so the bytes are neither read into the
/// process nor copied out of it again, and no memory holds them.
struct FileRegions: StreamedBody {
    typealias Element = IOData

    let file: RegionFile
    let range: Range<Int64>

    init(path: String, range: Range<Int64>) {
        self.file = RegionFile(path: path)
        self.range = range
    }

    func release() {
        file.close()
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let file: RegionFile
        var offset: Int64
        let end: Int64

        mutating func next() async throws -> IOData? {
            guard offset < end else { return nil }
            let bytes = offset..<Swift.min(end, offset + Int64(UploadFile.chunkSize))
            let region = try file.region(bytes)
            offset = bytes.upperBound
            return .fileRegion(region)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(file: file, offset: range.lowerBound, end: range.upperBound)
    }
}

/// The file behind a body's regions: opened by the first region, closed when the body is released (which
/// ``HTTPTransport/HTTPExchange/send(_:streaming:length:meter:doing:)`` does once the request is over).
///
/// It holds two descriptors of the file. The regions share a `NIOFileHandle`, which NIO uses while it writes
/// them and lends to no one else meanwhile. The other is for checking, before each region, that the file still
/// reaches that far: sendfile at the end of a file sends nothing, and the request would wait for bytes that
/// never come until the stall watchdog ends it.
final class RegionFile: Sendable {
    private enum State {
        case unopened
        case open(handle: NIOFileHandle, descriptor: CInt)
        case released
    }

    let path: String
    private let state = NIOLockedValueBox(State.unopened)

    init(path: String) {
        self.path = path
    }

    /// The region of `bytes`; fails when the file no longer holds them, or when the body was released.
    func region(_ bytes: Range<Int64>) throws -> FileRegion {
        try state.withLockedValue { state in
            let (handle, descriptor): (NIOFileHandle, CInt)
            switch state {
            case .released: throw CancellationError()
            case .open(let openHandle, let openDescriptor): (handle, descriptor) = (openHandle, openDescriptor)
            case .unopened:
                (handle, descriptor) = try open()
                state = .open(handle: handle, descriptor: descriptor)
            }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw UploadFile.failure("read", path) }
            guard Int64(info.st_size) >= bytes.upperBound else { throw UploadFile.shrank(path) }
            return FileRegion(
                fileHandle: handle, readerIndex: Int(bytes.lowerBound), endIndex: Int(bytes.upperBound))
        }
    }

    /// Closes the file; later regions fail. Called where no region is being written (see ``RegionFile``).
    func close() {
        state.withLockedValue { state in
            if case .open(let handle, let descriptor) = state {
                try? handle.close()
                Glibc.close(descriptor)
            }
            state = .released
        }
    }

    private func open() throws -> (NIOFileHandle, CInt) {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw UploadFile.failure("open", path) }
        let shared = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard shared >= 0 else {
            let error = UploadFile.failure("open", path)
            Glibc.close(descriptor)
            throw error
        }
        return (NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: shared), descriptor)
    }
}
