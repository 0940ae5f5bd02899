import StageKit

/// Limits on input files (`inputs.limits`), checked before any stage runs.
public struct InputLimits: Sendable, Hashable {
    /// The smallest size taken, in bytes.
    public var minSize: Int64?
    /// The largest size taken, in bytes.
    public var maxSize: Int64?
    /// The shortest duration taken, in seconds.
    public var minDuration: Double?
    /// The longest duration taken, in seconds.
    public var maxDuration: Double?
    /// Container names taken (`mp4`, `mov`, `matroska`); empty takes any.
    public var containers: [String]
    /// Video codecs taken (`h264`, `hevc`); empty takes any.
    public var videoCodecs: [String]

    /// Creates limits.
    public init(
        minSize: Int64? = nil, maxSize: Int64? = nil, minDuration: Double? = nil, maxDuration: Double? = nil,
        containers: [String] = [], videoCodecs: [String] = []
    ) {
        self.minSize = minSize
        self.maxSize = maxSize
        self.minDuration = minDuration
        self.maxDuration = maxDuration
        self.containers = containers
        self.videoCodecs = videoCodecs
    }

    /// Whether checking the limits needs a media probe.
    var needProbe: Bool {
        minDuration != nil || maxDuration != nil || !containers.isEmpty || !videoCodecs.isEmpty
    }

    /// Why a file of `size` bytes is left out, or nil when it is within the size limits.
    func violation(size: Int64) -> LimitViolation? {
        if let minSize, size < minSize {
            return .smaller(size, than: minSize)
        }
        if let maxSize, size > maxSize {
            return .larger(size, than: maxSize)
        }
        return nil
    }

    /// Why a media file is left out, or nil when it is within the media limits.
    func violation(of facts: MediaFacts) -> LimitViolation? {
        if let minDuration, facts.duration < minDuration {
            return .shorter(facts.duration, than: minDuration)
        }
        if let maxDuration, facts.duration > maxDuration {
            return .longer(facts.duration, than: maxDuration)
        }
        let names = facts.container.split(separator: ",").map(String.init)
        if !containers.isEmpty, !names.contains(where: { containers.contains($0) }) {
            return .container(facts.container, allowed: containers)
        }
        if !videoCodecs.isEmpty, !videoCodecs.contains(facts.videoCodec ?? "") {
            return .videoCodec(facts.videoCodec, allowed: videoCodecs)
        }
        return nil
    }
}
