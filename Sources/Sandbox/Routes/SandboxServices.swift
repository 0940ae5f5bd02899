import StageKit

/// What every route needs, handed to the route builders.
struct SandboxServices: Sendable {
    let state: SandboxState
    let faults: FaultInjector
    let stats: SandboxStats
    let configuration: SandboxConfiguration
}
