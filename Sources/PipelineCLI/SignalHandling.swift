import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT and SIGTERM cancel the run: stages stop, checkpoint, and the process exits with 130. A second
/// signal exits at once (the checkpoints already written still hold). The signals arrive through
/// swift-service-lifecycle's `UnixSignalsSequence`.
enum SignalHandling {
    static func cancellingOnSignal<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let work = Task { await body() }
        let watcher = Task {
            var received = 0
            for await _ in signals {
                received += 1
                if received > 1 { _exit(130) }
                Output.error("pipeline: interrupted; saving checkpoints (press Ctrl-C again to quit at once)")
                work.cancel()
            }
        }
        let result = await work.value
        watcher.cancel()
        return result
    }
}
