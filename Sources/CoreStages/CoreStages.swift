public import PipelineKit

extension StageRegistry {
    /// Registers the stages that need nothing beyond the engine: `exec`, `file.copy`, `set`.
    public mutating func registerCoreStages() {
        register(ExecStage.self, source: .builtIn)
        register(FileCopyStage.self, source: .builtIn)
        register(SetStage.self, source: .builtIn)
    }
}
