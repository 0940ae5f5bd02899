import CMediaShim
public import StageKit

/// A media operation that failed, with a message a user can act on.
public struct MediaError: ClassifiedError, Sendable, CustomStringConvertible {
    /// What kind of failure, so callers can react to it.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        /// The input file does not exist.
        public static let inputNotFound = Code(name: "input not found")
        /// The input is not a media file, or too damaged to open.
        public static let notMedia = Code(name: "not media")
        /// The input has no video stream.
        public static let noVideo = Code(name: "no video")
        /// No decoder for the input's codec, or the encoder is missing from FFmpeg.
        public static let unsupportedCodec = Code(name: "unsupported codec")
        /// A stream cannot be copied into MP4.
        public static let remuxUnsupported = Code(name: "remux unsupported")
        /// The output cannot be created.
        public static let outputNotWritable = Code(name: "output not writable")
        /// The disk is full.
        public static let diskFull = Code(name: "disk full")
        /// Not one frame could be decoded.
        public static let noFrames = Code(name: "no frames")
        /// Audio alone was asked of a file without audio.
        public static let noAudio = Code(name: "no audio")
        /// An option is out of range.
        public static let invalidArgument = Code(name: "invalid argument")
        /// A quality measurement's reference is not 8-bit 4:2:0 SDR video.
        public static let qualityUnsupported = Code(name: "quality unsupported")
        /// A quality measurement's two files differ in frame count or rotation.
        public static let qualityMismatch = Code(name: "quality mismatch")
        /// FFmpeg's libraries cannot be loaded.
        public static let ffmpegUnavailable = Code(name: "ffmpeg unavailable")
        /// Any other FFmpeg error.
        public static let ffmpeg = Code(name: "ffmpeg")

        public var description: String { name }

        init(name: String) {
            self.name = name
        }

        init(shimCode: Int32) {
            switch shimCode {
            case MS_ERROR_INPUT_NOT_FOUND.rawValue: self = .inputNotFound
            case MS_ERROR_NOT_MEDIA.rawValue: self = .notMedia
            case MS_ERROR_NO_VIDEO.rawValue: self = .noVideo
            case MS_ERROR_UNSUPPORTED_CODEC.rawValue: self = .unsupportedCodec
            case MS_ERROR_REMUX_UNSUPPORTED.rawValue: self = .remuxUnsupported
            case MS_ERROR_OUTPUT_OPEN.rawValue: self = .outputNotWritable
            case MS_ERROR_DISK_FULL.rawValue: self = .diskFull
            case MS_ERROR_NO_FRAMES.rawValue, MS_ERROR_EVERY_PART_EMPTY.rawValue: self = .noFrames
            case MS_ERROR_NO_AUDIO.rawValue: self = .noAudio
            case MS_ERROR_INVALID_ARGUMENT.rawValue: self = .invalidArgument
            case MS_ERROR_FFMPEG_UNAVAILABLE.rawValue: self = .ffmpegUnavailable
            case MS_ERROR_QUALITY_UNSUPPORTED.rawValue: self = .qualityUnsupported
            case MS_ERROR_QUALITY_MISMATCH.rawValue: self = .qualityMismatch
            default: self = .ffmpeg
            }
        }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, with FFmpeg's own explanation when it gave one.
    public var message: String
    /// The shim's or FFmpeg's negative error code.
    public var shimCode: Int32

    /// Media errors are about the file or the disk: retrying the same thing does not help.
    public var disposition: FailureDisposition { .fatal }

    /// The machine-readable kind: a problem of the input, of the disk, or of FFmpeg itself.
    public var kind: ErrorKind {
        switch code {
        case .inputNotFound, .notMedia, .noVideo, .noAudio, .unsupportedCodec, .remuxUnsupported, .noFrames,
            .qualityUnsupported, .qualityMismatch:
            .invalidInput
        case .diskFull: .quotaExceeded
        case .invalidArgument: .invalidOptions
        default: ErrorKind("media-failure")
        }
    }

    public var description: String { message }

    /// The error for a failed shim call: its message buffer, or the code's text.
    init(shimCode: Int32, message buffer: [CChar]) {
        var text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.isEmpty {
            var description = [CChar](repeating: 0, count: 256)
            _ = ms_strerror(shimCode, &description, description.count)
            text = String(decoding: description.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        self.code = Code(shimCode: shimCode)
        self.message = text
        self.shimCode = shimCode
    }

    init(code: Code, message: String) {
        self.code = code
        self.message = message
        self.shimCode = 0
    }
}
