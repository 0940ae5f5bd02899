package import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
package import NIOCore
import NIOHTTP1

/// The body of a streamed request: its parts, read one by one as the socket takes them. A part is either
/// bytes in memory or a file region, which the kernel sends from the page cache without the bytes passing
/// through the process (sendfile); only a plain connection can carry regions (see
/// ``AsyncHTTPClient/HTTPClientRequest/carriesFileRegions``).
package protocol StreamedBody: AsyncSequence, Sendable where Element == IOData {
    /// Frees what the parts refer to, such as the file handle of regions. It is called once the request is over,
    /// however it ended, on the event loop of the connection: there no write of a part can be under way, and
    /// a part still queued fails instead of being written.
    func release()

    /// The parts as the connection's event loop may read them itself, each at once; nil when they must be
    /// awaited (the default).
    func immediateParts() -> (any ImmediateParts)?
}

extension StreamedBody {
    /// Parts in memory refer to nothing that must be freed.
    package func release() {}

    /// Parts are awaited.
    package func immediateParts() -> (any ImmediateParts)? { nil }
}

/// Parts of a body that are read without suspending, such as a file read from the page cache: the event loop
/// that writes them reads the next one itself, so the bytes are read and sent on one thread, with no hand-over.
package protocol ImmediateParts: Sendable {
    /// The next part; nil once the body is complete.
    func next() throws -> IOData?
}

extension HTTPClientRequest {
    /// Whether the request's connection can carry file regions: plain HTTP can, while TLS has to encrypt every
    /// byte in the process.
    package var carriesFileRegions: Bool {
        url.lowercased().hasPrefix("http://")
    }

    /// Whether the request goes to a server on this machine: `localhost`, `[::1]` or an IPv4 address in
    /// 127.0.0.0/8 (a host name that merely starts with "127." is not one).
    package var reachesThisMachine: Bool {
        guard let host = URL(string: url)?.host?.lowercased() else { return false }
        let address = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if address == "localhost" || address == "::1" { return true }
        var ipv4 = in_addr()
        return inet_pton(AF_INET, address, &ipv4) == 1 && UInt32(bigEndian: ipv4.s_addr) >> 24 == 127
    }
}

extension HTTPExchange {
    /// Parts of a streamed body that may be in the HTTP client's hands at once: one being written to the
    /// socket, one ready behind it.
    static let partsInFlight = 2

    /// Sends `request` with a body of `length` bytes made of the parts of `body`, and reads the answer.
    ///
    /// The body is read as the socket takes it: a part is read only once fewer than ``partsInFlight``
    /// parts wait to be written. AsyncHTTPClient reports each written part to the request's delegate
    /// (`didSendRequestPart`), and that report frees the room for the next one, so a slow server holds the
    /// reader back within a bounded window without any timer. `meter` admits each part through the run's
    /// bandwidth limit, and counts it once written, which is what the stall watchdog and progress see.
    /// Once the request is over, the body is released (``StreamedBody/release()``) before this returns.
    package func send<Body: StreamedBody>(
        _ request: HTTPClientRequest, streaming body: Body, length: Int64, meter: TransferMeter,
        doing action: String
    ) async throws -> HTTPAnswer {
        let client = self.client
        // The connection runs on this loop too, so that the body is released where its parts are written.
        let eventLoop = client.eventLoopGroup.next()
        let answer: Result<HTTPAnswer, any Error>
        do {
            answer = .success(
                try await guarded(by: meter, doing: action) {
                    let window = SendWindow(room: HTTPExchange.partsInFlight)
                    let streamed = try HTTPClient.Request(
                        url: request.url, method: request.method, headers: request.headers,
                        body: .stream(contentLength: length) { writer in
                            if !meter.limitsBandwidth, let parts = body.immediateParts() {
                                return HTTPExchange.write(parts, to: writer, on: eventLoop)
                            }
                            return eventLoop.makeFutureWithTask {
                                var parts = body.makeAsyncIterator()
                                while true {
                                    try await window.reserve()
                                    guard let part = try await parts.next() else { return }
                                    try await meter.admit(part.readableBytes)
                                    try await writer.write(part).get()
                                }
                            }
                        })
                    let task = client.execute(
                        request: streamed, delegate: AnswerCollector(window: window, meter: meter),
                        eventLoop: .delegateAndChannel(on: eventLoop))
                    // However the request ends, a body reader still waiting for room must stop.
                    defer { window.close(CancellationError()) }
                    return try await withTaskCancellationHandler {
                        try await task.futureResult.get()
                    } onCancel: {
                        task.cancel()
                    }
                })
        } catch {
            answer = .failure(error)
        }
        try? await eventLoop.submit { body.release() }.get()
        return try answer.get()
    }
}

extension HTTPExchange {
    /// Writes `parts` from the event loop itself: a part is read and written, and the next one is read once
    /// AsyncHTTPClient's future says the channel takes more (its writability), so at most a part beyond the
    /// channel's buffer waits in memory.
    static func write(
        _ parts: any ImmediateParts, to writer: HTTPClient.Body.StreamWriter, on eventLoop: any EventLoop
    ) -> EventLoopFuture<Void> {
        let written = eventLoop.makePromise(of: Void.self)
        @Sendable func writeNext() {
            do {
                guard let part = try parts.next() else { return written.succeed() }
                writer.write(part).whenComplete { result in
                    switch result {
                    // A task of its own, so that parts taken at once do not nest calls.
                    case .success: eventLoop.execute(writeNext)
                    case .failure(let error): written.fail(error)
                    }
                }
            } catch {
                written.fail(error)
            }
        }
        eventLoop.execute(writeNext)
        return written.futureResult
    }
}

/// The room a streamed body has in the HTTP client: the reader takes a place before it reads a part, and
/// the client's report that the part was written gives the place back.
final class SendWindow: Sendable {
    private struct State {
        var room: Int
        var waiting: CheckedContinuation<Void, any Error>?
        var closed: (any Error)?
    }

    private let state: NIOLockedValueBox<State>

    /// A window of `room` parts.
    init(room: Int) {
        state = NIOLockedValueBox(State(room: room))
    }

    /// Takes a place, waiting until one is free; throws once the window is closed.
    func reserve() async throws {
        let taken = try state.withLockedValue { state in
            if let closed = state.closed { throw closed }
            guard state.room > 0 else { return false }
            state.room -= 1
            return true
        }
        if taken { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome: Result<Void, any Error>? = state.withLockedValue { state in
                if let closed = state.closed { return .failure(closed) }
                guard state.room > 0 else {
                    state.waiting = continuation
                    return nil
                }
                state.room -= 1
                return .success(())
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// Gives a place back: a part was written.
    func release() {
        let waiting = state.withLockedValue { state in
            guard let waiting = state.waiting else {
                state.room += 1
                return nil as CheckedContinuation<Void, any Error>?
            }
            state.waiting = nil
            return waiting
        }
        waiting?.resume()
    }

    /// Ends the window: a waiting reader, and every later one, gets `error`.
    func close(_ error: any Error) {
        let waiting = state.withLockedValue { state in
            if state.closed == nil { state.closed = error }
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(throwing: error)
    }
}

/// The delegate of a streamed request: it frees the body's window as parts are written, tells the meter,
/// and collects the answer (at most ``HTTPExchange/answerLimit`` bytes of body).
final class AnswerCollector: HTTPClientResponseDelegate {
    typealias Response = HTTPAnswer

    private let window: SendWindow
    private let meter: TransferMeter
    private let answer = NIOLockedValueBox<(head: HTTPResponseHead?, body: ByteBuffer)>((nil, ByteBuffer()))

    init(window: SendWindow, meter: TransferMeter) {
        self.window = window
        self.meter = meter
    }

    func didSendRequestPart(task: HTTPClient.Task<HTTPAnswer>, _ part: IOData) {
        meter.sent(part.readableBytes)
        window.release()
    }

    func didSendRequest(task: HTTPClient.Task<HTTPAnswer>) {
        meter.bodyFinished()
    }

    func didReceiveHead(task: HTTPClient.Task<HTTPAnswer>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        answer.withLockedValue { $0.head = head }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<HTTPAnswer>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        var part = buffer
        let fits = answer.withLockedValue { answer in
            guard answer.body.readableBytes + part.readableBytes <= HTTPExchange.answerLimit else { return false }
            answer.body.writeBuffer(&part)
            return true
        }
        return fits
            ? task.eventLoop.makeSucceededVoidFuture()
            : task.eventLoop.makeFailedFuture(NIOTooManyBytesError(maxBytes: HTTPExchange.answerLimit))
    }

    func didReceiveError(task: HTTPClient.Task<HTTPAnswer>, _ error: any Error) {
        window.close(error)
    }

    func didFinishRequest(task: HTTPClient.Task<HTTPAnswer>) throws -> HTTPAnswer {
        try answer.withLockedValue { answer in
            guard let head = answer.head else { throw HTTPClientError.remoteConnectionClosed }
            return HTTPAnswer(status: head.status, headers: head.headers, body: answer.body)
        }
    }
}

/// A body of chunks in memory: any sequence of `ByteBuffer`s as a ``StreamedBody``.
package struct BufferedBody<Chunks: AsyncSequence & Sendable>: StreamedBody where Chunks.Element == ByteBuffer {
    package typealias Element = IOData

    let chunks: Chunks

    /// The body made of `chunks`.
    package init(_ chunks: Chunks) {
        self.chunks = chunks
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: Chunks.AsyncIterator

        package mutating func next() async throws -> IOData? {
            try await chunks.next().map(IOData.byteBuffer)
        }
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunks: chunks.makeAsyncIterator())
    }
}
