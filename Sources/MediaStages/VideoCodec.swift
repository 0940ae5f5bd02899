import CMediaShim
public import StageKit

/// The video codecs an export writes, each through one FFmpeg encoder: what `video.codec` and a package's `codec`
/// choose, and what ``TranscodeSettings`` stores. The raw values are FFmpeg's names of the codecs, as a probe
/// reports them.
public enum VideoCodec: String, OptionChoice, Hashable, Sendable {
    /// H.264 through libx264: plays everywhere.
    case h264
    /// HEVC through libx265, tagged `hvc1` (the sample entry Apple's players accept): about the same picture in
    /// fewer bits.
    case hevc
    /// AV1 through SVT-AV1 (libsvtav1; Debian's FFmpeg also has libaom and rav1e, SVT-AV1 is the fast one): fewer
    /// bits still, for recent browsers and phones.
    case av1

    /// The library whose version decides the encoder's bytes (`libx265.so.199`: `x265`).
    public var library: String {
        switch self {
        case .h264: "x264"
        case .hevc: "x265"
        case .av1: "SvtAv1Enc"
        }
    }

    /// The encoder's constant rate factors.
    public var crfRange: ClosedRange<Int> { self == .av1 ? 0...63 : 0...51 }

    /// The shim's name for the codec, which picks its encoder.
    var shimCodec: ms_video_codec {
        switch self {
        case .h264: MS_VIDEO_H264
        case .hevc: MS_VIDEO_HEVC
        case .av1: MS_VIDEO_AV1
        }
    }
}
