public import StageKit

/// The object an upload to a store (S3, OSS) made: the outputs `s3.upload` and `oss.upload` share.
public struct UploadedObject: StageOutputs {
    /// The bucket.
    @Output("The bucket.") public var bucket = ""
    /// The object key.
    @Output("The object key.") public var key = ""
    /// The object's ETag (`"MD5-N"` for a multipart upload).
    @Output("The object's ETag.") public var etag = ""
    /// The object's URL.
    @Output("The object's URL.") public var location = ""
    /// Bytes uploaded.
    @Output("Bytes uploaded.") public var size: Int64 = 0

    public init() {}
}

extension UploadedObject {
    /// Object `key` in `bucket`, as a multipart upload of `size` bytes completed it.
    init(bucket: String, key: String, _ completed: CompletedUpload, size: Int64) {
        self.init()
        self.bucket = bucket
        self.key = key
        etag = completed.etag
        location = completed.location
        self.size = size
    }
}
