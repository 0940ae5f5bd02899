import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM cancel the run: stages stop, checkpoint, and the process exits with 130. A second
/// signal exits at once (the checkpoints already written still hold).
enum SignalHandling {
    static func cancellingOnSignal<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
        let task = Task { await body() }
        let received = Atomic<Int>(0)
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if received.add(1, ordering: .relaxed).newValue > 1 { _exit(130) }
                Output.error("pipeline: interrupted; saving checkpoints (press Ctrl-C again to quit at once)")
                task.cancel()
            }
            source.resume()
            return source
        }
        let result = await task.value
        for source in sources { source.cancel() }
        return result
    }
}
