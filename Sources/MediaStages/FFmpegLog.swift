import CMediaShim
import Logging
import NIOConcurrencyHelpers
import StageKit
import Synchronization

/// FFmpeg has one log callback per process: each operation gets a route, set on the thread that runs it, which the
/// shim passes with every line logged for it (also from the threads the shim starts for it and from its decoders',
/// encoders' and filter graphs' own threads: `ms_log_set_route`), so a line goes to the logger of the operation that
/// made it, also while others run (a batch with `concurrency`, a probe of one file while another transcodes, a ladder
/// beside a thumbnail).
///
/// A damaged file makes FFmpeg complain about every packet it skips (a file with a third overwritten gave 200
/// lines for 4 s): an operation passes on its first ``linesShown`` lines, then one line with the number left
/// out, so a batch of broken files stays readable (the stage's own warning says how far decoding got).
/// `--verbose` (debug level) passes on every line. FFmpeg formats lines up to one level for the whole process: the
/// most verbose one that a running operation wants; an operation takes only the lines of its own level, so a quiet
/// one beside a `--verbose` one neither shows nor counts FFmpeg's info lines.
///
/// A line without a route (FFmpeg logged it without a context on a thread of its own: a frame-threaded decoder's
/// workers do for some damaged pictures) belongs to the one operation running, if only one runs. With several,
/// nobody can tell whose it is: putting it under the latest operation's file, as if that file were damaged, would
/// send a user reading the batch's log to the wrong file, and dropping it would hide a broken file. It goes to the
/// latest operation's logger saying so, with every file being worked on: `ffmpeg (one of a.mp4, b.mp4): …`, under a
/// cap of its own (``linesShown`` lines while operations overlap; the operation that ends the overlap says how many
/// were left out).
enum FFmpegLog {
    /// The lines an operation passes on before it leaves the rest out.
    static let linesShown = 20

    /// An operation running, with what it has passed on.
    private struct Route {
        var id: UInt64
        var logger: Logger?
        /// The file the operation works on, which names it in a line that cannot be told apart.
        var subject: String
        var shown = 0
        var leftOut = 0

        var verbose: Bool { logger.map { $0.logLevel <= .debug } ?? false }
        /// The most verbose `ms_log_level` the operation shows.
        var level: Int32 { Int32(verbose ? MS_LOG_INFO.rawValue : MS_LOG_WARNING.rawValue) }

        /// The logger a line at `level` goes to, or nil when the operation does not show it or it is one too many.
        mutating func admit(level: Int32) -> Logger? {
            guard let logger, level <= self.level else { return nil }
            if !verbose, shown >= FFmpegLog.linesShown {
                leftOut += 1
                return nil
            }
            shown += 1
            return logger
        }
    }

    /// The operations running, in the order they started, and the lines without a route while several run.
    private struct Routes {
        var running: [Route] = []
        var unattributed = Route(id: 0, subject: "")

        /// The level FFmpeg formats lines up to: the most verbose an operation running wants.
        var level: Int32 { running.map(\.level).max() ?? Int32(MS_LOG_WARNING.rawValue) }
    }

    private static let routes = NIOLockedValueBox(Routes())
    private static let counter = Atomic<UInt64>(0)
    private static let installed: Void = {
        ms_set_log_handler(
            { _, route, level, line in
                guard let line else { return }
                FFmpegLog.forward(route: route, level: level, line: String(cString: line))
            }, nil)
    }()

    /// Runs `body` (an operation on the file at `subject`) on a thread of its own (``BlockingWork/runLong(_:)``)
    /// with FFmpeg's log lines about it sent to `logger` (none: dropped).
    static func run<T: Sendable>(
        logging logger: Logger?, about subject: String, _ body: @escaping @Sendable () -> T
    ) async -> T {
        _ = installed
        let id = counter.add(1, ordering: .relaxed).newValue
        changeRoutes { $0.running.append(Route(id: id, logger: logger, subject: subject)) }
        defer { end(id) }
        return await BlockingWork.runLong {
            ms_log_set_route(id)
            defer { ms_log_set_route(0) }
            return body()
        }
    }

    /// Ends route `id`: its logger says how many lines it left out, and, when it ends an overlap, how many lines
    /// without a route were left out meanwhile.
    private static func end(_ id: UInt64) {
        let (ended, unattributedLeftOut, remaining) = changeRoutes { routes in
            let ended = routes.running.first { $0.id == id }
            routes.running.removeAll { $0.id == id }
            guard routes.running.count < 2 else { return (ended, 0, routes.running.last?.logger) }
            let leftOut = routes.unattributed.leftOut
            routes.unattributed = Route(id: 0, subject: "")
            return (ended, leftOut, routes.running.last?.logger)
        }
        if let ended, let logger = ended.logger, ended.leftOut > 0 {
            logger.warning("ffmpeg: \(ended.leftOut) more message(s) left out (--verbose shows every one)")
        }
        if unattributedLeftOut > 0, let logger = ended?.logger ?? remaining {
            logger.warning(
                "ffmpeg (one of several files): \(unattributedLeftOut) more message(s) left out (--verbose shows every one)"
            )
        }
    }

    /// Changes the routes and sets the level FFmpeg formats lines up to from them.
    private static func changeRoutes<T>(_ change: (inout Routes) -> T) -> T {
        // Set under the routes' lock (the shim only stores it), so two operations starting or ending at once set it
        // in the order they changed the routes.
        routes.withLockedValue { routes in
            let result = change(&routes)
            ms_set_log_level(routes.level)
            return result
        }
    }

    /// Where a line of `route` at `level` goes: the logger and the line's prefix, or nil when it is dropped.
    private static func destination(route: UInt64, level: Int32) -> (logger: Logger, prefix: String)? {
        routes.withLockedValue { routes in
            if route != 0 {
                // A route that ended has no more lines: its threads end with it.
                guard let index = routes.running.firstIndex(where: { $0.id == route }) else { return nil }
                return routes.running[index].admit(level: level).map { ($0, "ffmpeg: ") }
            }
            if routes.running.count == 1 {
                return routes.running[0].admit(level: level).map { ($0, "ffmpeg: ") }
            }
            guard let latest = routes.running.last(where: { $0.logger != nil }) else { return nil }
            routes.unattributed.logger = latest.logger
            let subjects = routes.running.map(\.subject).joined(separator: ", ")
            return routes.unattributed.admit(level: level).map { ($0, "ffmpeg (one of \(subjects)): ") }
        }
    }

    /// Passes on a line the shim logged: `level` is its `ms_log_level`.
    static func forward(route: UInt64, level: Int32, line: String) {
        guard let (logger, prefix) = destination(route: route, level: level) else { return }
        switch UInt32(level) {
        case MS_LOG_ERROR.rawValue: logger.error("\(prefix)\(line)")
        case MS_LOG_WARNING.rawValue: logger.warning("\(prefix)\(line)")
        case MS_LOG_INFO.rawValue: logger.debug("\(prefix)\(line)")
        default: logger.trace("\(prefix)\(line)")
        }
    }
}
