import AsyncHTTPClient
import Foundation
import HTTPTransport
import NIOCore
import NIOHTTP1
import StageKit
import Synchronization
import TestSupport
import Testing

@testable import UploadStages

/// A streamed request body is read as the socket takes it: memory for an upload must not depend on how
/// slowly the server reads.
@Suite struct StreamedBodyTests {
    /// Chunks made on demand, each recording how far reading has run ahead of what the client has written.
    final class WatchedChunks: AsyncSequence, Sendable {
        let count: Int
        let size: Int
        let meter: TransferMeter
        let furthestAhead = Atomic<Int64>(0)

        init(count: Int, size: Int, meter: TransferMeter) {
            (self.count, self.size, self.meter) = (count, size, meter)
        }

        struct AsyncIterator: AsyncIteratorProtocol {
            let chunks: WatchedChunks
            var made = 0

            mutating func next() async throws -> ByteBuffer? {
                guard made < chunks.count else { return nil }
                made += 1
                let ahead = Int64(made * chunks.size) - chunks.meter.bytesSent
                chunks.furthestAhead.max(ahead, ordering: .relaxed)
                return ByteBuffer(repeating: UInt8(made % 251), count: chunks.size)
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: self) }
    }

    /// Sends `body` as the body of a PUT to the sink on `port` through a client of its own, shut down after.
    private func send(
        _ body: some StreamedBody, length: Int64, meter: TransferMeter, to port: Int
    ) async throws -> HTTPAnswer {
        let client = HTTPClient.makeForStages()
        let exchange = HTTPExchange(
            client: client, stallTimeout: TimeSpan(seconds: 30), answerTimeout: TimeSpan(seconds: 30))
        let answer: Result<HTTPAnswer, any Error>
        do {
            answer = .success(
                try await exchange.send(
                    sinkRequest(port), streaming: body, length: length, meter: meter, doing: "sending to the sink"))
        } catch {
            answer = .failure(error)
        }
        try await client.shutdown()
        return try answer.get()
    }

    private func sinkRequest(_ port: Int, scheme: String = "http") -> HTTPClientRequest {
        HTTPClientRequest(url: "\(scheme)://127.0.0.1:\(port)/sink", method: .PUT, headers: [])
    }

    /// How many descriptors of this process are open on `url`'s file.
    /// Sends `body`, the file at `url` from its 8th byte on, to a sink on `port`, and checks that exactly those
    /// bytes arrived and were counted, and that the file is closed afterwards.
    private func expectDelivered(_ body: FileBody, of url: URL, to port: Int) async throws {
        let size = Int64(try Data(contentsOf: url).count)
        let meter = TransferMeter(base: 7, total: size, limiter: nil) { _ in }
        let received = try await send(body, length: size - 7, meter: meter, to: port)
        let tail = url.appendingPathExtension("tail")
        defer { try? FileManager.default.removeItem(at: tail) }
        try Data(contentsOf: url).dropFirst(7).write(to: tail)
        #expect(received.integer("X-Received") == size - 7)
        #expect(received.headers.first(name: "X-SHA256") == (await sha256sum(tail.path)))
        #expect(meter.bytesSent == size - 7)
        #expect(try descriptors(openOn: url) == 0)
    }

    private func descriptors(openOn url: URL) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")) == url.path
        }
    }

    @Test func aSlowServerHoldsTheReaderWithinTwoChunks() async throws {
        let server = try await PeerServer(script: "slow_sink.py", arguments: ["--bytes-per-second", "\(32 << 20)"])
        let (count, size) = (96, 1 << 20)
        let meter = TransferMeter(base: 0, total: Int64(count * size), limiter: nil) { _ in }
        let chunks = WatchedChunks(count: count, size: size, meter: meter)
        let received = try await send(BufferedBody(chunks), length: Int64(count * size), meter: meter, to: server.port)
        #expect(received.status == .noContent)
        #expect(received.integer("X-Received") == Int64(count * size))
        #expect(meter.bytesSent == Int64(count * size))
        // The chunk just made counts as ahead, so two in flight show up as at most three chunks.
        #expect(chunks.furthestAhead.load(ordering: .relaxed) <= Int64(3 * size))
    }

    @Test func anEmptyBodyIsSentAndAnswered() async throws {
        let server = try await PeerServer(script: "slow_sink.py")
        let meter = TransferMeter(base: 0, total: 0, limiter: nil) { _ in }
        let received = try await send(
            BufferedBody(WatchedChunks(count: 0, size: 1, meter: meter)), length: 0, meter: meter, to: server.port)
        #expect(received.status == .noContent)
        #expect(received.integer("X-Received") == 0)
    }

    @Test func chunksCoverTheRangeExactlyEvenWhenKept() async throws {
        let url = try randomFile(bytes: 5 * UploadFile.chunkSize + 3, seed: 9)
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try UploadFile(path: url.path)
        // The chunks are all kept until the end: a reader that reuses its buffers must not overwrite them.
        var kept: [ByteBuffer] = []
        for try await chunk in file.chunks(7..<file.size) { kept.append(chunk) }
        let read = kept.reduce(into: Data()) { $0.append(contentsOf: $1.readableBytesView) }
        #expect(kept.count == 5)
        #expect(read == (try Data(contentsOf: url)).dropFirst(7))
    }

    /// A digest reads the whole range through one buffer (an upload digests parts while it sends others), and sees
    /// every byte of it once, in order. (It guards against the body's rotation of three buffers; a buffer allocated
    /// afresh for each chunk and freed before the next could reuse one address too.) At most two addresses: the
    /// blocking pool's thread may still hold the last chunk for a moment after it handed it over, and then the next
    /// read gets new memory rather than write under it (seen once in a whole-suite run on a busy machine).
    @Test func aDigestReadsTheRangeIntoOneBuffer() async throws {
        let url = try randomFile(bytes: 5 * UploadFile.chunkSize + 3, seed: 21)
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try UploadFile(path: url.path)
        var (read, buffers) = (Data(), Set<Int>())
        try await file.digest(7..<file.size) { bytes in
            read.append(contentsOf: bytes)
            buffers.insert(Int(bitPattern: bytes.baseAddress))
        }
        #expect(read == (try Data(contentsOf: url)).dropFirst(7))
        #expect(buffers.count <= 2, "\(buffers.count) buffers for 6 chunks")
    }

    /// Parts read at once, each recording how far reading has run ahead of what the client has written.
    final class WatchedParts: ImmediateParts {
        let count: Int
        let size: Int
        let meter: TransferMeter
        let made = Atomic<Int>(0)
        let furthestAhead = Atomic<Int64>(0)

        init(count: Int, size: Int, meter: TransferMeter) {
            (self.count, self.size, self.meter) = (count, size, meter)
        }

        func next() throws -> IOData? {
            let made = made.add(1, ordering: .relaxed).newValue
            guard made <= count else { return nil }
            furthestAhead.max(Int64(made * size) - meter.bytesSent, ordering: .relaxed)
            return .byteBuffer(ByteBuffer(repeating: UInt8(made % 251), count: size))
        }
    }

    /// A body whose parts the event loop reads itself.
    struct ImmediateBody: StreamedBody {
        typealias Element = IOData
        let parts: WatchedParts

        func immediateParts() -> (any ImmediateParts)? { parts }

        struct AsyncIterator: AsyncIteratorProtocol {
            let parts: WatchedParts
            mutating func next() async throws -> IOData? { try parts.next() }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(parts: parts) }
    }

    @Test func aSlowServerHoldsTheEventLoopsReadsWithinTheChannelsBuffer() async throws {
        let server = try await PeerServer(script: "slow_sink.py", arguments: ["--bytes-per-second", "\(32 << 20)"])
        let (count, size) = (384, 128 << 10)
        let meter = TransferMeter(base: 0, total: Int64(count * size), limiter: nil) { _ in }
        let parts = WatchedParts(count: count, size: size, meter: meter)
        let received = try await send(
            ImmediateBody(parts: parts), length: Int64(count * size), meter: meter, to: server.port)
        #expect(received.status == .noContent)
        #expect(received.integer("X-Received") == Int64(count * size))
        #expect(meter.bytesSent == Int64(count * size))
        // A part is read once the channel takes more: the one just made, and one waiting in the channel.
        #expect(parts.furthestAhead.load(ordering: .relaxed) <= Int64(3 * size))
    }

    @Test func toThisMachineTheEventLoopReadsTheFileWithItsExactBytes() async throws {
        let url = try randomFile(bytes: 5 * UploadFile.chunkSize + 3, seed: 15)
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try UploadFile(path: url.path)
        let server = try await PeerServer(script: "slow_sink.py", arguments: ["--bytes-per-second", "\(1 << 30)"])
        let body = file.body(7..<file.size, for: sinkRequest(server.port))
        guard case .local = body, body.immediateParts() != nil else {
            Issue.record("a body to 127.0.0.1 is not read by the event loop")
            return
        }
        try await expectDelivered(body, of: url, to: server.port)
    }

    @Test(arguments: ["localhost", "127.0.0.1", "127.1.2.3", "[::1]", "LOCALHOST"])
    func aServerOnThisMachineIsRecognised(host: String) {
        #expect(HTTPClientRequest(url: "http://\(host):8080/x").reachesThisMachine)
    }

    @Test(arguments: [
        "example.com", "10.0.0.1", "128.0.0.1", "[2001:db8::1]", "localhost.example.com", "127.example.com",
    ])
    func aServerElsewhereIsNot(host: String) {
        #expect(!HTTPClientRequest(url: "https://\(host)/x").reachesThisMachine)
    }

    @Test func overPlainHTTPTheFileGoesAsRegionsWithItsExactBytes() async throws {
        let url = try randomFile(bytes: 5 * UploadFile.chunkSize + 3, seed: 11)
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try UploadFile(path: url.path)
        let server = try await PeerServer(script: "slow_sink.py", arguments: ["--bytes-per-second", "\(1 << 30)"])
        // The server is on this machine: the regions a remote one would get are made as for it.
        guard case .regions = file.body(7..<file.size, for: HTTPClientRequest(url: "http://example.com/x")) else {
            Issue.record("a body over plain HTTP is not made of file regions")
            return
        }
        let body = FileBody.regions(FileRegions(path: url.path, range: 7..<file.size))
        try await expectDelivered(body, of: url, to: server.port)
    }

    @Test func overTLSTheFileIsReadIntoMemory() throws {
        let url = try randomFile(bytes: 10, seed: 12)
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try UploadFile(path: url.path)
        guard case .chunks = file.body(0..<10, for: HTTPClientRequest(url: "https://example.com/x")) else {
            Issue.record("a body over TLS is not made of chunks in memory")
            return
        }
    }

    @Test(arguments: ["regions", "local"])
    func aServerThatHangsUpHalfWayLeavesNoDescriptorOpen(body kind: String) async throws {
        let url = try randomFile(bytes: 8 * UploadFile.chunkSize, seed: 13)
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try UploadFile(path: url.path)
        let server = try await PeerServer(
            script: "slow_sink.py", arguments: ["--close-after", "\(2 * UploadFile.chunkSize)"])
        let meter = TransferMeter(base: 0, total: file.size, limiter: nil) { _ in }
        let body =
            kind == "regions"
            ? FileBody.regions(FileRegions(path: url.path, range: 0..<file.size))
            : file.body(0..<file.size, for: sinkRequest(server.port))
        await #expect(throws: HTTPFailure.self) {
            try await send(body, length: file.size, meter: meter, to: server.port)
        }
        #expect(try descriptors(openOn: url) == 0)
    }

    @Test func aFileCutShortEndsTheRegionsWithAClearError() async throws {
        let url = try randomFile(bytes: 3 * UploadFile.chunkSize, seed: 14)
        defer { try? FileManager.default.removeItem(at: url) }
        let regions = FileRegions(path: url.path, range: 0..<Int64(3 * UploadFile.chunkSize))
        var parts = regions.makeAsyncIterator()
        guard case .fileRegion(let first) = try await parts.next() else {
            Issue.record("the first part is not a file region")
            return
        }
        #expect(first.readerIndex == 0 && first.endIndex == UploadFile.chunkSize)
        #expect(truncate(url.path, off_t(UploadFile.chunkSize + 5)) == 0)
        await #expect {
            _ = try await parts.next()
        } throws: { error in
            (error as? StageFailure)?.message.contains("shorter than expected") == true
        }
        regions.release()
        #expect(try descriptors(openOn: url) == 0)
    }
}
