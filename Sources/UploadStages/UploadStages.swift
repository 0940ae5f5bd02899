public import StageKit

/// The upload stages: `tus.upload`, `s3.upload`, `presigned.upload`, `http.upload`, `oss.upload`.
public enum UploadStageTypes {
    /// Every stage type of the module.
    public static let all: [any Stage.Type] = [
        TusUploadStage.self, S3UploadStage.self, PresignedUploadStage.self, HTTPUploadStage.self, OSSUploadStage.self,
    ]
}
