import NIOPosix

/// What every route needs, handed to the route builders.
struct SandboxServices: Sendable {
    let state: SandboxState
    let faults: FaultInjector
    let stats: SandboxStats
    let configuration: SandboxConfiguration
    /// Writes and reads upload files on NIO's blocking-I/O thread pool, never on an event loop.
    let fileIO: NonBlockingFileIO
}
