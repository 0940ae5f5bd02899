public import AsyncHTTPClient
import Foundation
package import NIOCore
package import NIOHTTP1
public import StageKit

/// A server's answer with its body read (bounded): what every upload protocol step looks at.
package struct HTTPAnswer: Sendable {
    package var status: HTTPResponseStatus
    package var headers: HTTPHeaders
    package var body: ByteBuffer

    /// An answer with its body read: by ``HTTPExchange``, or by a caller that streams a successful answer's
    /// body elsewhere and reads a failed one's here.
    package init(status: HTTPResponseStatus, headers: HTTPHeaders, body: ByteBuffer) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body as text.
    package var text: String { String(buffer: body) }

    /// The start of the body on one line, for error messages (an HTML error page stays readable).
    package var bodyExcerpt: String {
        let flat = text.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingCharacters(in: .whitespaces)
        return flat.count > 300 ? String(flat.prefix(300)) + "…" : flat
    }

    /// `Retry-After`, when given: seconds, or an HTTP date (the wait until then, none once it has passed).
    package var retryAfter: Duration? {
        guard let value = headers.first(name: "Retry-After")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Double(value), seconds >= 0 { return .milliseconds(Int64(seconds * 1000)) }
        guard let date = Self.httpDate(value) else { return nil }
        return .milliseconds(Int64(max(0, date.timeIntervalSinceNow) * 1000))
    }

    /// An HTTP date (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`).
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }

    /// A header as an integer.
    package func integer(_ name: String) -> Int64? {
        headers.first(name: name).flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
    }
}

/// Sends requests through AsyncHTTPClient with the safeguards long uploads need: a stall watchdog (no
/// byte of the body accepted for `stallTimeout` aborts the request, so a retry can resume) and a
/// deadline for the answer once the body is sent.
package struct HTTPExchange: Sendable {
    let client: HTTPClient
    /// Abort when the body makes no progress for this long.
    let stallTimeout: TimeSpan
    /// Abort when the answer to a request without a streamed body (a small JSON or XML one) takes this long.
    let answerTimeout: TimeSpan

    /// The largest answer body read.
    static let answerLimit = 4 << 20

    /// Creates an exchange.
    package init(client: HTTPClient, stallTimeout: TimeSpan, answerTimeout: TimeSpan) {
        self.client = client
        self.stallTimeout = stallTimeout
        self.answerTimeout = answerTimeout
    }

    /// Sends `request`, whose body (if any) is in memory, and reads the answer.
    package func send(_ request: HTTPClientRequest, doing action: String) async throws -> HTTPAnswer {
        let client = self.client
        return try await guarded(by: nil, doing: action) {
            let response = try await client.execute(request, timeout: .hours(24))
            let body = try await response.body.collect(upTo: HTTPExchange.answerLimit)
            return HTTPAnswer(status: response.status, headers: response.headers, body: body)
        }
    }

    /// Runs `exchange` against the stall watchdog (see ``watch(_:doing:)``): the first to finish wins, and
    /// the other is cancelled. Errors come out classified (``HTTPFailure/classify(_:doing:)``).
    func guarded(
        by meter: TransferMeter?, doing action: String, _ exchange: @escaping @Sendable () async throws -> HTTPAnswer
    ) async throws -> HTTPAnswer {
        do {
            return try await withThrowingTaskGroup(of: HTTPAnswer?.self) { group in
                group.addTask { try await exchange() }
                group.addTask { try await watch(meter, doing: action) }
                defer { group.cancelAll() }
                while let answer = try await group.next() {
                    if let answer { return answer }
                }
                throw CancellationError()
            }
        } catch {
            throw HTTPFailure.classify(error, doing: action)
        }
    }
}

extension HTTPExchange {
    /// Throws once a request stalls: its body (counted by `meter`) accepts no byte for ``stallTimeout``, its
    /// answer does not come within `max(10 s, 2 × stallTimeout)` of the last byte, or a request without a
    /// streamed body gets no answer within ``answerTimeout``. It sleeps until the moment a limit could be
    /// reached, not on a fixed tick: an upload that keeps moving wakes it once per limit.
    func watch(_ meter: TransferMeter?, doing action: String) async throws -> Never {
        guard let meter else {
            try await Task.sleep(for: .seconds(answerTimeout.seconds))
            throw HTTPFailure(.timedOut, message: "\(action): no answer within \(answerTimeout)")
        }
        while true {
            // The last few MiB of a body sit in socket buffers: "all sent" is not "all received". A server that
            // stops reading there shows up as a missing answer, so that wait is short too.
            let sending = !meter.isBodyFinished
            let limit = sending ? stallTimeout.seconds : max(10, 2 * stallTimeout.seconds)
            let idle = meter.idleSeconds
            guard idle <= limit else {
                throw HTTPFailure(
                    .timedOut,
                    message: sending
                        ? "\(action): stalled, no byte accepted for \(stallTimeout) (\(meter.bytesSent) bytes sent)"
                        : "\(action): no answer within \(TimeSpan(seconds: limit)) after the body was sent")
            }
            try await Task.sleep(for: .seconds(limit - idle) + .milliseconds(1))
        }
    }
}

extension HTTPClientRequest {
    /// A request with the given method and headers.
    package init(url: String, method: HTTPMethod, headers: [(String, String)]) {
        self.init(url: url)
        self.method = method
        for (name, value) in headers { self.headers.add(name: name, value: value) }
    }
}

/// The HTTP client that upload and platform stages send their requests through, found in
/// ``StageContext/services``. Its owner (the command line, a test, an app that embeds the engine) makes it
/// with ``AsyncHTTPClient/HTTPClient/makeForStages()``, gives it to the runner and shuts it down once its
/// runs are over.
public enum HTTPClientKey: ServiceKey {
    public typealias Value = HTTPClient
}

extension HTTPClient {
    /// A client made for stages. It fails a request at once when the server cannot be reached
    /// (AsyncHTTPClient's default keeps reconnecting until the request's deadline), so the stage's own retry
    /// policy, with its backoff and limits, decides what happens. It follows no redirects, since an upload
    /// body cannot be replayed to another host unasked. It keeps AsyncHTTPClient's TLS default: every
    /// server's certificate and host name are verified against the system's trust roots.
    public static func makeForStages() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// The client of hosts that give their stages none: made on first use, it lasts as long as the process.
    static let processWide = makeForStages()
}

extension StageContext {
    /// The HTTP client of this run: the one in ``StageContext/services``, else a process-wide one.
    package var httpClient: HTTPClient { services[HTTPClientKey.self] ?? .processWide }
}
