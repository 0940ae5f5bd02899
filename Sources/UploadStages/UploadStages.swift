public import StageKit

/// The upload stages: `tus.upload`, `s3.upload`, `s3.uploadFolder`, `presigned.upload`, `http.upload`, `oss.upload`.
public enum UploadStageTypes {
    /// Every stage type of the module.
    public static let all: [any Stage.Type] = [
        TusUploadStage.self, S3UploadStage.self, S3FolderUploadStage.self, PresignedUploadStage.self,
        HTTPUploadStage.self, OSSUploadStage.self,
    ]
}
