import Foundation

/// Runs blocking work (an FFmpeg call, a blocking read, `waitpid`) on a thread of its own, so that it
/// never holds one of the few threads Swift concurrency runs every task on: on a 2-core machine two
/// blocked pool threads would stall every other stage, timer and cancellation of the run.
public enum BlockingThread {
    /// Runs `body` on a new thread (8 MiB stack) and returns its result.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }
}
