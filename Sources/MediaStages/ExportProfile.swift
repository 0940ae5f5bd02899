/// A named set of transcode settings that workflows pick with `"profile"`.
public struct ExportProfile: Sendable, Hashable {
    /// The name used in workflows.
    public var name: String
    /// One line for `pipeline stages`.
    public var summary: String
    /// The settings it stands for.
    public var settings: TranscodeSettings

    /// The built-in profiles.
    public static let all: [ExportProfile] = [
        ExportProfile(
            name: "web-720p", summary: "H.264 CRF 23 veryfast, at most 1280×720, AAC 128 kb/s stereo",
            settings: settings(crf: 23, preset: "veryfast", width: 1280, height: 720, audio: 128_000)),
        ExportProfile(
            name: "web-1080p", summary: "H.264 CRF 22 veryfast, at most 1920×1080, AAC 160 kb/s stereo",
            settings: settings(crf: 22, preset: "veryfast", width: 1920, height: 1080, audio: 160_000)),
        ExportProfile(
            name: "mobile-480p", summary: "H.264 CRF 26 veryfast, at most 854×480 and 30 fps, AAC 96 kb/s stereo",
            settings: settings(crf: 26, preset: "veryfast", width: 854, height: 480, fps: 30, audio: 96_000)),
        ExportProfile(
            name: "source-quality", summary: "H.264 CRF 18 medium at the source's size, AAC 192 kb/s",
            settings: settings(crf: 18, preset: "medium", audio: 192_000)),
    ]

    /// The profile with this name.
    public static func named(_ name: String) -> ExportProfile? {
        all.first { $0.name == name }
    }

    private static func settings(
        crf: Int, preset: String, width: Int? = nil, height: Int? = nil, fps: Double? = nil, audio: Int64
    ) -> TranscodeSettings {
        var settings = TranscodeSettings()
        settings.crf = crf
        settings.preset = preset
        settings.maxWidth = width
        settings.maxHeight = height
        settings.maxFPS = fps
        settings.audioBitRate = audio
        settings.audioChannels = 2
        return settings
    }
}
