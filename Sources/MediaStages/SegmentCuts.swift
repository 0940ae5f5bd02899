public import StageKit

/// Where a segmented encode starts its segments, near each multiple of the segment length.
public enum SegmentCuts: String, OptionChoice, Codable {
    /// At the strongest scene change near it (one decoding pass over the source first), else as `keyframes`: the
    /// encoder's IDR frame at each join lands where the picture changes anyway, instead of in the middle of a shot.
    case scenes
    /// At the source's keyframe nearest to it (read from the container's index, no decoding), else at the multiple.
    case keyframes

    /// Whether a plan cut by this rule into segments of `length` takes the starts that a checkpoint saved (cut by
    /// `saved`, for `savedLength`) instead of finding them again: scene changes cost a pass over the source, so a
    /// resumed run, a farm takeover and `pipeline plan` keep them. Keyframes are read from the index again, and the
    /// segments saved with them are kept when the starts come out the same.
    func takesStarts(cutBy saved: SegmentCuts?, for savedLength: Double?, length: Double) -> Bool {
        self == .scenes && saved == .scenes && savedLength == length
    }
}
