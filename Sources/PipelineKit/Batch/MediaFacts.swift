/// What a run learns of a media file before any stage runs, to check `inputs.limits` and to skip files
/// FFmpeg cannot read; cached in the ledger with the file's fingerprint.
public struct MediaFacts: Sendable, Hashable, Codable {
    /// Seconds.
    public var duration: Double
    /// The container (demuxer) names, e.g. `mov,mp4,m4a,3gp,3g2,mj2`.
    public var container: String
    /// The video codec, e.g. `h264`; nil without video.
    public var videoCodec: String?

    /// Creates facts.
    public init(duration: Double, container: String, videoCodec: String?) {
        self.duration = duration
        self.container = container
        self.videoCodec = videoCodec
    }
}

/// The outcome of probing a file: its facts, or why it is not media FFmpeg can read.
public enum MediaProbeResult: Sendable, Hashable, Codable {
    /// A readable media file.
    case facts(MediaFacts)
    /// Not media, damaged, or empty: the probe's reason.
    case unreadable(String)
}

/// Probes a media file (the command line gives FFmpeg's probe).
public typealias MediaProber = @Sendable (_ path: String) async -> MediaProbeResult
