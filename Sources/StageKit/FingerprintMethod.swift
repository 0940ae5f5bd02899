/// How an item's content is identified: `inputs.fingerprint` in a workflow. Public, as the workflow's own value
/// (`PipelineKit`'s `InputSelection` and `BatchPlanner` take it); here because the fingerprints are computed below
/// the engine too (an upload's identity of the file it sends).
public enum FingerprintMethod: String, Sendable, Hashable, Codable, CaseIterable {
    /// The size and a hash of sampled blocks (the start, the end and evenly spaced blocks between): at most 4 MiB
    /// are read, whatever the file's size.
    case sampled
    /// The size and a hash of every byte.
    case full
}
