public import PipelineKit

extension StageRegistry {
    /// Registers the upload stages: `tus.upload`, `s3.upload`, `presigned.upload`, `http.upload`.
    public mutating func registerUploadStages() {
        register(TusUploadStage.self, source: .builtIn)
        register(S3UploadStage.self, source: .builtIn)
        register(PresignedUploadStage.self, source: .builtIn)
        register(HTTPUploadStage.self, source: .builtIn)
    }
}
