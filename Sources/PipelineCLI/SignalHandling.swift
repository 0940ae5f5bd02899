import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT and SIGTERM cancel the run: stages stop, checkpoint, and the process exits with 130. A second
/// signal exits at once (the checkpoints already written still hold). SIGUSR1 tells a run that
/// `pipeline cancel` or a dashboard left a request in the ledger (a cancel, or a retry for a watch). The signals
/// arrive through swift-service-lifecycle's `UnixSignalsSequence`.
enum SignalHandling {
    /// Runs `body`, cancelling it on SIGINT or SIGTERM; SIGUSR1 (sent by `pipeline cancel` or `pipeline serve`
    /// from another process) calls `onRequest`.
    static func cancellingOnSignal<T: Sendable>(
        onRequest: (@Sendable () async -> Void)? = nil, _ body: @escaping @Sendable () async -> T
    ) async -> T {
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm, .sigusr1)
        let work = Task { await body() }
        let watcher = Task {
            var received = 0
            for await signal in signals {
                if signal == .sigusr1 {
                    await onRequest?()
                    continue
                }
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
