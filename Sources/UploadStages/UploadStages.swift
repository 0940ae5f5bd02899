public import PipelineKit

extension StageRegistry {
    /// Registers the upload stages: `tus.upload`, `http.upload`.
    public mutating func registerUploadStages() {
        register(TusUploadStage.self, source: .builtIn)
    }
}
