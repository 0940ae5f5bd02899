import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StageKit

/// `GET /api/events`: the status as server-sent events, sent when it changes (counts, workers, the running stages'
/// progress), so the page updates what changed instead of asking every second and drawing itself again.
///
/// A stream follows the server's ``StatusFeed`` (one read a second for all streams) and sends each reading as an
/// event `status` when anything but its time changed, or `unreadable` with `{"error"}` when the ledger cannot be
/// read. A second without news sends a comment line, so a page that went away is noticed within a second or two (a
/// write to its closed connection fails) and its stream ends. A stream ends after 5 minutes, or as soon as its
/// caller may not read any more (signed out, or its session closed); the browser opens the next one itself. Beyond
/// the streams the feed takes, the answer is 503 with `Retry-After`, and the page reads the status itself.
struct StatusStream: Sendable {
    /// How often the feed reads the status, how long a stream lasts, and how many streams there may be at a time.
    struct Timing: Sendable {
        var interval = Duration.seconds(1)
        var lifetime = Duration.seconds(300)
        var limit = 32
    }

    /// Seconds a page refused a stream waits before it asks for another.
    static let retryAfter = 5

    let timing: Timing
    let feed: StatusFeed
    /// Whether the stream's caller may still read (checked at each reading).
    let mayRead: @Sendable () -> Bool
    /// The status as the stream's caller is sent it (whether it is signed in, say).
    let adapt: @Sendable (JSONValue) -> JSONValue

    func response() async -> Response {
        guard let (id, readings) = await feed.join() else {
            var response = DashboardRoutes.error(
                .serviceUnavailable, "too many open status streams; the page reads the status itself")
            response.headers[.retryAfter] = String(Self.retryAfter)
            return response
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody { [timing, feed, mayRead, adapt] writer in
                let sent: Result<Void, any Error>
                do {
                    try await Self.send(readings, to: &writer, until: .now + timing.lifetime, mayRead, adapt)
                    sent = .success(())
                } catch {
                    sent = .failure(error)
                }
                await feed.leave(id)
                try sent.get()
                try await writer.finish(nil)
            })
    }

    /// Writes `readings` as events until `end`, or until the caller may not read any more; a reading that tells
    /// nothing new is a comment line.
    private static func send(
        _ readings: AsyncStream<StatusFeed.Reading>, to writer: inout any ResponseBodyWriter,
        until end: ContinuousClock.Instant, _ mayRead: () -> Bool, _ adapt: (JSONValue) -> JSONValue
    ) async throws {
        // The browser waits a second before it opens a stream again.
        try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
        var sent: String?
        for await reading in readings {
            guard ContinuousClock.now < end, mayRead() else { return }
            let event = Self.event(reading, adapt)
            if event.compared != sent {
                try await writer.write(ByteBuffer(string: "event: \(event.name)\ndata: \(event.data)\n\n"))
                sent = event.compared
            } else {
                try await writer.write(ByteBuffer(string: ":\n\n"))
            }
        }
    }

    /// The event a reading is sent as: its name, what tells it from the last one sent (the status without its
    /// time), and its data on one line.
    private static func event(_ reading: StatusFeed.Reading, _ adapt: (JSONValue) -> JSONValue)
        -> (name: String, compared: String, data: String)
    {
        switch reading {
        case .unreadable(let message):
            let data = JSONValue.object(["error": .string(message)]).serialized()
            return ("unreadable", data, data)
        case .status(let shared):
            let document = adapt(shared)
            var timeless = document.objectValue ?? [:]
            timeless["time"] = nil
            return ("status", JSONValue.object(timeless).serialized(), document.serialized())
        }
    }
}
