public import StageKit

/// Where a segmented encode starts its segments, near each multiple of the segment length.
public enum SegmentCuts: String, OptionChoice, Codable {
    /// At the strongest scene change near it (one decoding pass over the source first), else as `keyframes`: the
    /// encoder's IDR frame at each join lands where the picture changes anyway, instead of in the middle of a shot.
    case scenes
    /// At the source's keyframe nearest to it (read from the container's index, no decoding), else at the multiple.
    case keyframes
}
