import Foundation
import NIOPosix

/// Runs blocking work (an fsync, a `pread`, an FFmpeg call, `waitpid`) off the threads Swift concurrency
/// runs every task on: on a 2-core machine two blocked pool threads would stall every other stage, timer
/// and cancellation of the run.
///
/// Two lanes, so that a long encode never delays a checkpoint's fsync:
/// - ``run(_:)`` for calls that take microseconds to a second: a small pool of threads made for it.
/// - ``runLong(_:)`` for calls that take seconds to hours (an encode, waiting for a child process): a thread
///   of their own, whose start costs nothing next to the work.
public enum BlockingWork {
    /// The pool of the short lane; started on first use, kept for the life of the process.
    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 4)
        pool.start()
        return pool
    }()

    /// Runs a short blocking call on the pool and returns its result (or rethrows its error). When the calling
    /// task is cancelled before a thread picks the call up, it does not run and `CancellationError` is
    /// thrown; once started, it runs to its end. Work that must happen even then (a checkpoint written while
    /// a stage is being interrupted) runs from a task of its own.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(body)
    }

    /// Runs a long blocking call on a thread of its own (8 MiB stack) and returns its result.
    public static func runLong<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }
}
