extension StageContext {
    /// This context with `value` kept as the member `key` of every checkpoint the stage saves through it (a checkpoint
    /// that is no JSON object is saved as it is): a stage that chose something before a part that checkpoints on its
    /// own (an export's CRF before its segments) keeps the choice across a crash.
    package func keepingInCheckpoints(_ key: String, _ value: JSONValue) -> StageContext {
        StageContext(
            stageID: stageID, stageType: stageType, item: item, attempt: attempt, logger: logger,
            scratchFolder: scratchFolder, services: services, previousOutputs: previousOutputs,
            savedCheckpoint: savedCheckpoint,
            checkpointer: KeepingCheckpointer(base: checkpointer, key: key, value: value),
            progress: progressHandler, retryPolicy: retryPolicy, retrying: retryHandler)
    }
}

/// Adds one member to every checkpoint before its checkpointer saves it.
private struct KeepingCheckpointer: StageCheckpointing {
    let base: any StageCheckpointing
    let key: String
    let value: JSONValue

    func saveCheckpoint(_ checkpoint: JSONValue) async throws {
        guard case .object(var members) = checkpoint else { return try await base.saveCheckpoint(checkpoint) }
        members[key] = value
        try await base.saveCheckpoint(.object(members))
    }

    func idempotencyKey(_ name: String) async throws -> String {
        try await base.idempotencyKey(name)
    }
}
