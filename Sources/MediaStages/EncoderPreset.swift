import CMediaShim
public import StageKit

/// A video encoder's speed preset by x264's names, fastest first: what `video.preset` and a package's `preset`
/// choose, and what ``TranscodeSettings`` stores. x265 takes the same names; SVT-AV1's numbered presets are mapped
/// from them by the shim (`ms_preset`: ultrafast 12 … veryslow 2).
public enum EncoderPreset: String, OptionChoice, Hashable, Sendable {
    case ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow

    /// The shim's preset of the same name.
    var shimPreset: ms_preset {
        switch self {
        case .ultrafast: MS_PRESET_ULTRAFAST
        case .superfast: MS_PRESET_SUPERFAST
        case .veryfast: MS_PRESET_VERYFAST
        case .faster: MS_PRESET_FASTER
        case .fast: MS_PRESET_FAST
        case .medium: MS_PRESET_MEDIUM
        case .slow: MS_PRESET_SLOW
        case .slower: MS_PRESET_SLOWER
        case .veryslow: MS_PRESET_VERYSLOW
        }
    }
}
