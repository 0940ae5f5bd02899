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

    /// Sends `chunks` as the body of a PUT to the sink on `port` through a client of its own, shut down after.
    private func send(_ chunks: WatchedChunks, length: Int64, to port: Int) async throws -> HTTPAnswer {
        let client = HTTPClient.makeForStages()
        let exchange = HTTPExchange(
            client: client, stallTimeout: TimeSpan(seconds: 30), answerTimeout: TimeSpan(seconds: 30))
        let answer: Result<HTTPAnswer, any Error>
        do {
            answer = .success(
                try await exchange.send(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/sink", method: .PUT, headers: []),
                    streaming: chunks, length: length, meter: chunks.meter, doing: "sending to the sink"))
        } catch {
            answer = .failure(error)
        }
        try await client.shutdown()
        return try answer.get()
    }

    @Test func aSlowServerHoldsTheReaderWithinTwoChunks() async throws {
        let server = try await PeerServer(script: "slow_sink.py", arguments: ["--bytes-per-second", "\(32 << 20)"])
        let (count, size) = (96, 1 << 20)
        let meter = TransferMeter(base: 0, total: Int64(count * size), limiter: nil) { _ in }
        let chunks = WatchedChunks(count: count, size: size, meter: meter)
        let received = try await send(chunks, length: Int64(count * size), to: server.port)
        #expect(received.status == .noContent)
        #expect(received.integer("X-Received") == Int64(count * size))
        #expect(meter.bytesSent == Int64(count * size))
        // The chunk just made counts as ahead, so two in flight show up as at most three chunks.
        #expect(chunks.furthestAhead.load(ordering: .relaxed) <= Int64(3 * size))
    }

    @Test func anEmptyBodyIsSentAndAnswered() async throws {
        let server = try await PeerServer(script: "slow_sink.py")
        let meter = TransferMeter(base: 0, total: 0, limiter: nil) { _ in }
        let received = try await send(WatchedChunks(count: 0, size: 1, meter: meter), length: 0, to: server.port)
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
}
