import Foundation

/// A named set of transcode settings that workflows pick with `"profile"`, with the rules of where its files play.
public struct ExportProfile: Sendable, Hashable {
    /// The name used in workflows.
    public var name: String
    /// One line for `pipeline stages`.
    public var summary: String
    /// The settings it stands for.
    public var settings: TranscodeSettings
    /// What a file must be to be copied instead of re-encoded; every transcode with this profile is such a file.
    public var rules: PlaybackRules

    /// The built-in profiles.
    public static let all: [ExportProfile] = [
        ExportProfile(
            name: "web-720p", summary: "H.264 CRF 23 veryfast, at most 1280×720 and 60 fps, AAC 128 kb/s stereo",
            settings: settings(crf: 23, preset: .veryfast, width: 1280, height: 720, fps: 60, audio: 128_000),
            rules: .h264(maxLevel: 32)),
        ExportProfile(
            name: "web-1080p", summary: "H.264 CRF 22 veryfast, at most 1920×1080 and 60 fps, AAC 160 kb/s stereo",
            settings: settings(crf: 22, preset: .veryfast, width: 1920, height: 1080, fps: 60, audio: 160_000),
            rules: .h264(maxLevel: 42)),
        ExportProfile(
            name: "mobile-480p", summary: "H.264 CRF 26 veryfast, at most 854×480 and 30 fps, AAC 96 kb/s stereo",
            settings: settings(crf: 26, preset: .veryfast, width: 854, height: 480, fps: 30, audio: 96_000),
            rules: .h264(maxLevel: 31)),
        ExportProfile(
            name: "source-quality", summary: "H.264 CRF 18 medium at the source's size, AAC 192 kb/s",
            settings: settings(crf: 18, preset: .medium, audio: 192_000), rules: .h264(maxLevel: nil)),
        ExportProfile(
            name: "archive-hevc",
            summary: "HEVC (hvc1) CRF 22 medium at the source's size, AAC 192 kb/s: about half H.264's bytes",
            settings: settings(codec: .hevc, crf: 22, preset: .medium, audio: 192_000), rules: .hevc),
        ExportProfile(
            name: "web-av1", summary: "AV1 (SVT-AV1) CRF 35 fast, at most 1920×1080 and 60 fps, AAC 128 kb/s stereo",
            settings: settings(
                codec: .av1, crf: 35, preset: .fast, width: 1920, height: 1080, fps: 60, audio: 128_000),
            rules: .av1),
    ]

    /// The profile with this name.
    public static func named(_ name: String) -> ExportProfile? {
        all.first { $0.name == name }
    }

    private static func settings(
        codec: VideoCodec = .h264, crf: Int, preset: EncoderPreset, width: Int? = nil, height: Int? = nil,
        fps: Double? = nil, audio: Int64
    ) -> TranscodeSettings {
        var settings = TranscodeSettings()
        settings.codec = codec
        settings.crf = Double(crf)
        settings.preset = preset
        settings.maxWidth = width
        settings.maxHeight = height
        settings.maxFPS = fps
        settings.audioBitRate = audio
        settings.audioChannels = 2
        return settings
    }
}

/// What a file must be to play where a profile promises, so that `mode: auto` may copy it instead of re-encoding.
///
/// The size, frame rate and bit rate bounds come from the transcode's settings (the profile's, with the stage's
/// options on top); the rest is written here, once per profile. The transcode path produces such a file from any
/// source: 8-bit 4:2:0 SDR (HDR sources tone-mapped into BT.709) in limited range, progressive, square pixels, both
/// tracks starting at 0, AAC-LC at 44.1 or 48 kHz.
public struct PlaybackRules: Sendable, Hashable {
    /// The video codec.
    public var codec: VideoCodec
    /// The codec profiles that play (as FFmpeg names them: `Constrained Baseline`, `Main`, `High`).
    public var profiles: [String]
    /// The highest level, as the codec stores it (H.264: 31 is 3.1); nil for any.
    public var maxLevel: Int?
    /// Audio channels at most.
    public var maxChannels = 2
    /// The audio sample rates that play everywhere; a transcode resamples others to the first.
    public var sampleRates = [48_000, 44_100]
    /// How far apart the tracks may start, in seconds (a copied file keeps its offsets).
    public var startTolerance = 0.05

    /// H.264 up to `maxLevel`: what browsers and phones decode in hardware.
    public static func h264(maxLevel: Int?) -> PlaybackRules {
        PlaybackRules(codec: .h264, profiles: ["Constrained Baseline", "Baseline", "Main", "High"], maxLevel: maxLevel)
    }

    /// HEVC Main: Apple's devices, recent browsers and TVs.
    public static let hevc = PlaybackRules(codec: .hevc, profiles: ["Main"], maxLevel: nil)

    /// AV1 Main: recent browsers and phones.
    public static let av1 = PlaybackRules(codec: .av1, profiles: ["Main"], maxLevel: nil)

    /// The rules for `codec` when no profile names them: the codec's usual ones, any level.
    public static func standard(for codec: VideoCodec) -> PlaybackRules {
        switch codec {
        case .h264: .h264(maxLevel: nil)
        case .hevc: .hevc
        case .av1: .av1
        }
    }

    /// The first property of the file that does not fit, as the end of "transcoding because …"; nil when it
    /// fits and copying the streams gives a file that plays where the profile promises.
    public func mismatch(_ info: MediaInfo, settings: TranscodeSettings) -> String? {
        guard let video = info.video else { return "the input has no video" }
        if let reason = mismatch(video, settings: settings) { return reason }
        if let reason = mismatch(info.audio, settings: settings) { return reason }
        if info.audioStreams > 1 { return "it has \(info.audioStreams) audio tracks, the profile keeps one" }
        if let audio = info.audio, abs(audio.start - video.start) > startTolerance {
            let (later, earlier) = audio.start > video.start ? ("audio", "video") : ("video", "audio")
            let gap = String(format: "%.2f", abs(audio.start - video.start))
            return "its \(later) starts \(gap) s after its \(earlier), the profile needs both to start together"
        }
        return nil
    }

    private func mismatch(_ video: MediaInfo.Video, settings: TranscodeSettings) -> String? {
        let name = Self.codecNames[codec.rawValue] ?? codec.rawValue
        if video.codec != codec.rawValue { return "its video is \(video.codec), the profile needs \(codec.rawValue)" }
        if let hdr = video.highDynamicRange { return "its video is HDR (\(hdr)), the profile needs SDR" }
        if video.bitDepth != 8 { return "its video is \(video.bitDepth)-bit, the profile needs 8-bit" }
        if video.chroma != "4:2:0" { return "its video is \(video.chroma), the profile needs 4:2:0" }
        if !profiles.contains(video.profile) {
            let profile = video.profile.isEmpty ? "of an unknown profile" : "\(name) \(video.profile)"
            return "its video is \(profile), the profile needs \(name) \(Self.list(profiles))"
        }
        if video.fullRange { return "its video uses the full range, the profile needs the limited (tv) range" }
        if video.interlaced { return "its video is interlaced, the profile needs progressive" }
        if video.sampleAspectWidth != video.sampleAspectHeight {
            return
                "its pixels are not square (\(video.sampleAspectWidth):\(video.sampleAspectHeight)), the profile needs square pixels"
        }
        if let maxWidth = settings.maxWidth, video.displayWidth > maxWidth {
            return "it is \(video.displayWidth) wide, the profile needs at most \(maxWidth)"
        }
        if let maxHeight = settings.maxHeight, video.displayHeight > maxHeight {
            return "it is \(video.displayHeight) high, the profile needs at most \(maxHeight)"
        }
        if video.displayWidth % 2 != 0 || video.displayHeight % 2 != 0 {
            return "it is \(video.displayWidth)×\(video.displayHeight), the profile needs even dimensions"
        }
        if let fps = settings.maxFPS, video.fps > fps + 0.01 {
            return "its frame rate is \(String(format: "%.2f", video.fps)), the profile needs at most \(fps)"
        }
        if let maxLevel, video.level > maxLevel || video.level <= 0 {
            return "its video's level is \(Self.level(video.level)), the profile needs at most \(Self.level(maxLevel))"
        }
        if let rate = settings.videoBitRate, video.bitRate > rate {
            return "its video bit rate is \(video.bitRate), the profile needs at most \(rate)"
        }
        return nil
    }

    private func mismatch(_ audio: MediaInfo.Audio?, settings: TranscodeSettings) -> String? {
        guard let audio else { return nil }
        if audio.codec != "aac" { return "its audio is \(audio.codec), the profile needs aac" }
        if audio.profile != "LC" {
            return
                "its audio is AAC \(audio.profile.isEmpty ? "of an unknown profile" : audio.profile), the profile needs AAC LC"
        }
        let channels = min(settings.audioChannels ?? maxChannels, maxChannels)
        if audio.channels > channels {
            return "it has \(audio.channels) audio channels, the profile needs at most \(channels)"
        }
        if !sampleRates.contains(audio.sampleRate) {
            return
                "its audio is at \(audio.sampleRate) Hz, the profile needs \(Self.list(sampleRates.sorted().map(String.init))) Hz"
        }
        return nil
    }

    /// The settings a transcode of `info` uses to keep this promise: audio resampled when its rate is not one that
    /// plays everywhere.
    func promise(_ settings: TranscodeSettings, for info: MediaInfo) -> TranscodeSettings {
        var settings = settings
        if settings.audioSampleRate == nil, let audio = info.audio, !sampleRates.contains(audio.sampleRate),
            let rate = sampleRates.first
        {
            settings.audioSampleRate = rate
        }
        return settings
    }

    /// What a file that fits is, for the log.
    var summary: String {
        "\(Self.codecNames[codec.rawValue] ?? codec.rawValue) \(Self.list(profiles)), 8-bit 4:2:0 SDR, AAC LC"
    }

    private static let codecNames = ["h264": "H.264", "hevc": "HEVC", "av1": "AV1"]

    /// H.264's level_idc 31 as 3.1.
    private static func level(_ value: Int) -> String {
        value <= 0 ? "unknown" : "\(value / 10).\(value % 10)"
    }

    /// "a, b or c".
    private static func list(_ items: [String]) -> String {
        items.count <= 1 ? items.joined() : items.dropLast().joined(separator: ", ") + " or " + (items.last ?? "")
    }
}
