/// How to produce an MP4.
public struct TranscodeSettings: Sendable, Hashable, Codable {
    /// Re-encode, or copy the compressed streams.
    public enum Mode: String, Sendable, Hashable, Codable {
        /// Decode and re-encode.
        case transcode
        /// Copy the compressed streams.
        case remux
    }

    /// Re-encode or copy.
    public var mode: Mode = .transcode
    /// The video codec as stored: nil for H.264 (settings written before there was a choice). Set through
    /// ``codec``, which keeps H.264 nil; decoding sets it as stored.
    public private(set) var videoCodec: VideoCodec?
    /// The encoder's constant rate factor (``VideoCodec/crfRange``; x264 and x265 take fractions, SVT-AV1 whole
    /// CRFs only); nil for the encoder's default. A whole CRF encodes as an integer, as before fractions.
    public var crf: Double?
    /// Video bits per second (with a CRF: a cap).
    public var videoBitRate: Int64?
    /// Speed preset by x264's names, such as `veryfast` (mapped for the other encoders); nil for the encoder's
    /// default.
    public var preset: EncoderPreset?
    /// Fit inside this box as displayed, keeping the aspect ratio, never upscaling.
    public var maxWidth: Int?
    /// See ``maxWidth``.
    public var maxHeight: Int?
    /// Drop frames to stay at or below this rate.
    public var maxFPS: Double?
    /// Audio bits per second; nil for the encoder's default.
    public var audioBitRate: Int64?
    /// Audio channels; nil keeps the source's, at most 2.
    public var audioChannels: Int?
    /// Audio samples per second; nil keeps the source's when AAC takes it.
    public var audioSampleRate: Int?
    /// Put the index first so playback can start before the download ends.
    public var faststart = true
    /// Decoder and encoder threads; 0 uses every core.
    public var threads = 0
    /// Which streams to write (transcode only): all, or the video or the audio (with or without the subtitles).
    public var streams = Streams.all
    /// Transcode only the video frames shown in this span of the input; needs `streams` `.video`. The
    /// output's timeline starts at the span's start.
    public var range: TimeRange?
    /// Force a keyframe on the first frame at or after every multiple of this many seconds (nil: the encoder's
    /// own choice), so the renditions of a ladder, encoded one by one, have keyframes at the same times.
    public var keyframeInterval: Double?

    /// Which streams a transcode writes.
    public enum Streams: String, Sendable, Hashable, Codable {
        /// The best video stream and the best audio stream.
        case all
        /// The video alone: a part of a segmented transcode.
        case video
        /// The audio alone: a ladder's audio rendition.
        case audio
        /// The audio and the text subtitle tracks (as mov_text): the one audio pass of a segmented transcode, from
        /// which the join copies both.
        case audioAndText
    }

    /// A span of the input: seconds from its start, `end` excluded (nil: to the end).
    public struct TimeRange: Sendable, Hashable, Codable {
        /// Seconds from the input's start.
        public var start: Double
        /// Seconds from the input's start, excluded; nil: to the end.
        public var end: Double?

        /// A span.
        public init(start: Double, end: Double?) {
            self.start = start
            self.end = end
        }
    }

    /// The defaults: transcode to H.264/AAC with x264's and the AAC encoder's defaults, faststart.
    public init() {}

    /// The video codec, H.264 when none was set; setting H.264 stores nil, as settings written before there was a
    /// choice have it (the stored settings and the segment plans' ids stay the same).
    public var codec: VideoCodec {
        get { videoCodec ?? .h264 }
        set { videoCodec = newValue == .h264 ? nil : newValue }
    }
}

/// What a transcode wrote.
public struct TranscodeReport: Sendable, Hashable {
    /// Seconds.
    public var duration: Double
    /// Size as shown.
    public var width: Int
    /// See ``width``.
    public var height: Int
    /// The display rotation carried over.
    public var rotation: Int
    /// Whether an audio stream was written.
    public var hasAudio: Bool
    /// Bytes.
    public var size: Int64
    /// Video frames written.
    public var videoFrames: Int64
    /// Packets or frames that could not be decoded and were skipped.
    public var decodeErrors: Int64
    /// How far decoding got; less than ``inputDuration`` for a truncated input.
    public var decodedSeconds: Double
    /// The input's duration as its container states it.
    public var inputDuration: Double
    /// A join's parts left out because nothing in their range could be decoded.
    public var partsLeftOut = 0
    /// The video encoder's own PSNR (dB) of each frame written, in display order, when it was asked for and the
    /// encoder reports it (libx264); nil otherwise.
    public var encoderPSNR: [Double]?
    /// The report of the encoder's PSNR (``QualitySource/encoder``): of ``encoderPSNR``, or pooled over a segmented
    /// encode's segments; nil when the encoder reported none.
    public var encoderQuality: QualityReport?
    /// Why ``encoderQuality`` is nil although it was asked for, when the encode knows more than its codec tells
    /// (a segment's scores went missing).
    public var encoderQualityNotReported: String?
}
