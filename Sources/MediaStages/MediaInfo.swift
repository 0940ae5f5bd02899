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
        video =
            info.has_video == 0
            ? nil
            : Video(
                codec: Self.string(info.video_codec), width: Int(info.width), height: Int(info.height),
                displayWidth: Int(info.display_width), displayHeight: Int(info.display_height),
                rotation: Int(info.rotation),
                fps: info.fps, pixelFormat: Self.string(info.pixel_format), bitRate: info.video_bit_rate,
                frameCount: info.frame_count)
        audio =
            info.has_audio == 0
            ? nil
            : Audio(
                codec: Self.string(info.audio_codec), sampleRate: Int(info.sample_rate), channels: Int(info.channels),
                bitRate: info.audio_bit_rate)
    }

    /// A fixed-size C char array as a String.
    static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { buffer in
            String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
