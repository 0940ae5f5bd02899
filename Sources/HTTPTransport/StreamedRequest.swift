package import AsyncHTTPClient
package import NIOCore
import NIOHTTP1
import Synchronization

extension HTTPExchange {
    /// Chunks of a streamed body that may be in the HTTP client's hands at once: one being written to the
    /// socket, one ready behind it.
    static let chunksInFlight = 2

    /// Sends `request` with a body of `length` bytes read from `chunks`, and reads the answer.
    ///
    /// The body is read as the socket takes it: a chunk is read only once fewer than ``chunksInFlight``
    /// chunks wait to be written. AsyncHTTPClient reports each written chunk to the request's delegate
    /// (`didSendRequestPart`), and that report frees the room for the next one, so a slow server holds the
    /// reader back within a bounded window without any timer. `meter` admits each chunk through the run's
    /// bandwidth limit, and counts it once written, which is what the stall watchdog and progress see.
    package func send<Chunks: AsyncSequence & Sendable>(
        _ request: HTTPClientRequest, streaming chunks: Chunks, length: Int64, meter: TransferMeter,
        doing action: String
    ) async throws -> HTTPAnswer where Chunks.Element == ByteBuffer {
        let client = self.client
        return try await guarded(by: meter, doing: action) {
            let window = SendWindow(room: HTTPExchange.chunksInFlight)
            let eventLoop = client.eventLoopGroup.next()
            let body = HTTPClient.Body.stream(contentLength: length) { writer in
                eventLoop.makeFutureWithTask {
                    var iterator = chunks.makeAsyncIterator()
                    while true {
                        try await window.reserve()
                        guard let chunk = try await iterator.next() else { return }
                        try await meter.admit(chunk.readableBytes)
                        try await writer.write(.byteBuffer(chunk)).get()
                    }
                }
            }
            let streamed = try HTTPClient.Request(
                url: request.url, method: request.method, headers: request.headers, body: body)
            let task = client.execute(
                request: streamed, delegate: AnswerCollector(window: window, meter: meter),
                eventLoop: .delegate(on: eventLoop))
            // However the request ends, a body reader still waiting for room must stop.
            defer { window.close(CancellationError()) }
            return try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
        }
    }
}

/// The room a streamed body has in the HTTP client: the reader takes a place before it reads a chunk, and
/// the client's report that the chunk was written gives the place back.
final class SendWindow: Sendable {
    private struct State {
        var room: Int
        var waiting: CheckedContinuation<Void, any Error>?
        var closed: (any Error)?
    }

    private let state: Mutex<State>

    /// A window of `room` chunks.
    init(room: Int) {
        state = Mutex(State(room: room))
    }

    /// Takes a place, waiting until one is free; throws once the window is closed.
    func reserve() async throws {
        let taken = try state.withLock { state in
            if let closed = state.closed { throw closed }
            guard state.room > 0 else { return false }
            state.room -= 1
            return true
        }
        if taken { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome: Result<Void, any Error>? = state.withLock { state in
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

    /// Gives a place back: a chunk was written.
    func release() {
        let waiting = state.withLock { state in
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
        let waiting = state.withLock { state in
            if state.closed == nil { state.closed = error }
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(throwing: error)
    }
}

/// The delegate of a streamed request: it frees the body's window as chunks are written, tells the meter,
/// and collects the answer (at most ``HTTPExchange/answerLimit`` bytes of body).
final class AnswerCollector: HTTPClientResponseDelegate {
    typealias Response = HTTPAnswer

    private let window: SendWindow
    private let meter: TransferMeter
    private let answer = Mutex<(head: HTTPResponseHead?, body: ByteBuffer)>((nil, ByteBuffer()))

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
        answer.withLock { $0.head = head }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<HTTPAnswer>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        var part = buffer
        let fits = answer.withLock { answer in
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
        try answer.withLock { answer in
            guard let head = answer.head else { throw HTTPClientError.remoteConnectionClosed }
            return HTTPAnswer(status: head.status, headers: head.headers, body: answer.body)
        }
    }
}
