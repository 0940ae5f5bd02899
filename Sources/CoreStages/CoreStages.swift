public import StageKit

/// The stages that need nothing beyond the SDK: `exec`, `file.copy`, `set`.
public enum CoreStageTypes {
    /// Every stage type of the module.
    public static let all: [any Stage.Type] = [ExecStage.self, FileCopyStage.self, SetStage.self]
}
