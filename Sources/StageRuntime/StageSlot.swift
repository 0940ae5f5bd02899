import StageKit

/// The slot of a limited resource (`--cpu-jobs`, `--transfers`) that a running stage holds. Present in
/// ``StageContext/services`` under ``StageSlotKey`` while the stage's resource has a limit.
package protocol StageSlot: Sendable {
    /// Runs `body` without the slot, then takes one again (waiting for a free one): for a stage that waits on work
    /// done elsewhere (other workers' segments), so that this machine's other jobs may use the slot meanwhile.
    func released<T: Sendable>(during body: () async throws -> T) async throws -> T
}

/// The key of the running stage's ``StageSlot`` in ``StageContext/services``.
package enum StageSlotKey: ServiceKey {
    package typealias Value = any StageSlot
}
