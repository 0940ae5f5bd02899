public import PipelineKit

extension StageRegistry {
    /// Registers the FFmpeg stages: `ffmpeg.probe`, `ffmpeg.transcode`, `ffmpeg.remux`, `ffmpeg.thumbnail`.
    public mutating func registerMediaStages() {
        register(ProbeStage.self, source: .builtIn)
        register(TranscodeStage.self, source: .builtIn)
        register(RemuxStage.self, source: .builtIn)
        register(ThumbnailStage.self, source: .builtIn)
    }
}
