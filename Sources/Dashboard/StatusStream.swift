import Foundation
import Hummingbird
import NIOCore
import StageKit

/// `GET /api/events`: the status as server-sent events, sent when it changes (counts, workers, the running stages'
/// progress), so the page updates what changed instead of asking every second and drawing itself again.
///
/// Each stream reads the status once a second and sends it as an event `status` when anything but its time changed,
/// or `unreadable` with `{"error"}` when the ledger cannot be read. A comment line goes out after 15 quiet seconds,
/// so a connection cut off is noticed at both ends. A stream ends after 5 minutes, or as soon as its caller may not
/// read any more (signed out, or its session closed); the browser opens the next one itself.
struct StatusStream: Sendable {
    /// How often a stream reads the status, and how long it lasts.
    struct Timing: Sendable {
        var interval = Duration.seconds(1)
        var lifetime = Duration.seconds(300)
    }

    /// Quiet reads after which a comment line is sent.
    static let keepAlive = 15

    /// What one read found: the status, or why the ledger cannot be read.
    enum Reading: Sendable {
        case status(JSONValue)
        case unreadable(String)
        /// The caller may not read any more: the stream ends.
        case refused
    }

    let timing: Timing
    /// Reads the status for the stream's caller.
    let read: @Sendable () async -> Reading

    func response() -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody { [timing, read] writer in
                // The browser waits a second before it opens a stream again.
                try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                var sent: String?
                var quiet = 0
                let end = ContinuousClock.now + timing.lifetime
                while ContinuousClock.now < end {
                    guard let event = Self.event(await read()) else { break }
                    if event.compared != sent {
                        try await writer.write(ByteBuffer(string: "event: \(event.name)\ndata: \(event.data)\n\n"))
                        (sent, quiet) = (event.compared, 0)
                    } else {
                        quiet += 1
                        if quiet >= Self.keepAlive {
                            try await writer.write(ByteBuffer(string: ": still here\n\n"))
                            quiet = 0
                        }
                    }
                    try await Task.sleep(for: timing.interval)
                }
                try await writer.finish(nil)
            })
    }

    /// The event a reading is sent as: its name, what tells it from the last one sent (the status without its
    /// time), and its data on one line; nil when the stream ends.
    private static func event(_ reading: Reading) -> (name: String, compared: String, data: String)? {
        switch reading {
        case .refused:
            return nil
        case .unreadable(let message):
            let data = JSONValue.object(["error": .string(message)]).serialized()
            return ("unreadable", data, data)
        case .status(let document):
            var timeless = document.objectValue ?? [:]
            timeless["time"] = nil
            return ("status", JSONValue.object(timeless).serialized(), document.serialized())
        }
    }
}
