public import StageKit

/// The FFmpeg stages: `ffmpeg.probe`, `ffmpeg.transcode`, `ffmpeg.remux`, `ffmpeg.thumbnail`, `ffmpeg.package`.
public enum MediaStageTypes {
    /// Every stage type of the module.
    public static let all: [any Stage.Type] = [
        ProbeStage.self, TranscodeStage.self, RemuxStage.self, ThumbnailStage.self, PackageStage.self,
    ]
}
