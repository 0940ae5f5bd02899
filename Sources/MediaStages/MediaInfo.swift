import CMediaShim

/// Container and stream facts of a media file.
public struct MediaInfo: Sendable, Hashable, Codable {
    /// The video stream transcoding uses.
    public struct Video: Sendable, Hashable, Codable {
        /// The codec, e.g. `h264`.
        public var codec: String
        /// Stored picture size.
        public var width: Int
        /// Stored picture height.
        public var height: Int
        /// Size as shown (swapped for a rotation of 90 or 270 degrees).
        public var displayWidth: Int
        /// Displayed height.
        public var displayHeight: Int
        /// Degrees a player turns the picture clockwise.
        public var rotation: Int
        /// Average frame rate.
        public var fps: Double
        /// e.g. `yuv420p`.
        public var pixelFormat: String
        /// Bits per second.
        public var bitRate: Int64
        /// From the container's index; 0 when it does not say.
        public var frameCount: Int64
        /// The codec's profile, e.g. `High`, `High 4:4:4 Predictive`, `Main 10`; empty when unknown.
        public var profile: String
        /// The codec's level as stored: H.264 `level_idc` (31 is 3.1), HEVC 30 × the level; 0 when unknown.
        public var level: Int
        /// The container's sample entry, e.g. `avc1`, `hev1`; empty when it has none.
        public var tag: String
        /// Bits per sample (8, 10, 12); 0 when unknown.
        public var bitDepth: Int
        /// Chroma subsampling: `4:2:0`, `4:2:2`, `4:4:4` (also RGB), `4:1:1`, `4:4:0`, `4:0:0`; empty when unknown.
        public var chroma: String
        /// Whether samples use the full 0–255 range (`yuvj*`, range `pc`).
        public var fullRange: Bool
        /// Whether the stream's field order says its frames are interlaced.
        public var interlaced: Bool
        /// The sample (pixel) aspect ratio's width; 1:1 when the file does not say.
        public var sampleAspectWidth: Int
        /// See ``sampleAspectWidth``.
        public var sampleAspectHeight: Int
        /// Seconds from the earliest stream's start to the first frame.
        public var start: Double
        /// The transfer characteristic as FFmpeg names it: `bt709`, `smpte2084` (PQ), `arib-std-b67` (HLG); empty
        /// when the file does not say.
        public var transfer: String
        /// The colour primaries: `bt709`, `bt2020`; empty when the file does not say.
        public var primaries: String

        /// `PQ` or `HLG` when the picture is HDR (its transfer says so), nil for SDR: an export tone-maps HDR, since
        /// every profile promises 8-bit SDR.
        public var highDynamicRange: String? {
            switch transfer {
            case "smpte2084": "PQ"
            case "arib-std-b67": "HLG"
            default: nil
            }
        }
    }

    /// The audio stream transcoding keeps (the default one).
    public struct Audio: Sendable, Hashable, Codable {
        /// The codec, e.g. `aac`.
        public var codec: String
        /// Samples per second.
        public var sampleRate: Int
        /// Channels.
        public var channels: Int
        /// Bits per second.
        public var bitRate: Int64
        /// The codec's profile, e.g. `LC`, `HE-AAC`; empty when unknown.
        public var profile: String
        /// Seconds from the earliest stream's start to the first sample.
        public var start: Double
        /// Seconds; 0 when unknown.
        public var duration: Double
    }

    /// Demuxer name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`.
    public var format: String
    /// Seconds.
    public var duration: Double
    /// Bytes.
    public var size: Int64
    /// Overall bits per second.
    public var bitRate: Int64
    /// Video streams (cover pictures excluded).
    public var videoStreams: Int
    /// Audio streams.
    public var audioStreams: Int
    /// Subtitle streams.
    public var subtitleStreams: Int
    /// Subtitle streams with text (SubRip, ASS/SSA, WebVTT, mov_text, plain text): an export keeps these, as
    /// mov_text; the others are pictures (DVD, Blu-ray, DVB subtitles).
    public var textSubtitleStreams: Int
    /// Data streams (timecode, GPS, ...) and attachments (fonts).
    public var dataStreams: Int
    /// Cover pictures.
    public var attachedPictures: Int
    /// Whether the file is a still picture (an image format), not a video.
    public var isStillImage: Bool
    /// The video stream transcoding uses, if any.
    public var video: Video?
    /// The audio stream transcoding keeps, if any.
    public var audio: Audio?
}

extension MediaInfo {
    init(_ info: ms_media_info) {
        format = Self.string(info.format_name)
        duration = info.duration
        size = info.size
        bitRate = info.bit_rate
        videoStreams = Int(info.video_stream_count)
        audioStreams = Int(info.audio_stream_count)
        subtitleStreams = Int(info.subtitle_stream_count)
        textSubtitleStreams = Int(info.text_subtitle_count)
        dataStreams = Int(info.data_stream_count)
        attachedPictures = Int(info.attached_picture_count)
        isStillImage = info.still_image != 0
        video =
            info.has_video == 0
            ? nil
            : Video(
                codec: Self.string(info.video_codec), width: Int(info.width), height: Int(info.height),
                displayWidth: Int(info.display_width), displayHeight: Int(info.display_height),
                rotation: Int(info.rotation),
                fps: info.fps, pixelFormat: Self.string(info.pixel_format), bitRate: info.video_bit_rate,
                frameCount: info.frame_count, profile: Self.string(info.video_profile), level: Int(info.video_level),
                tag: Self.string(info.video_tag), bitDepth: Int(info.bit_depth), chroma: Self.string(info.chroma),
                fullRange: info.full_range != 0, interlaced: info.interlaced != 0,
                sampleAspectWidth: Int(info.sar_num), sampleAspectHeight: Int(info.sar_den), start: info.video_start,
                transfer: Self.string(info.color_transfer), primaries: Self.string(info.color_primaries))
        audio =
            info.has_audio == 0
            ? nil
            : Audio(
                codec: Self.string(info.audio_codec), sampleRate: Int(info.sample_rate), channels: Int(info.channels),
                bitRate: info.audio_bit_rate, profile: Self.string(info.audio_profile), start: info.audio_start,
                duration: info.audio_duration)
    }

    /// A fixed-size C char array as a String.
    static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { buffer in
            String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
