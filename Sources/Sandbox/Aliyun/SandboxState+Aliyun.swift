import Foundation
import HTTPTypes
import StageKit

/// ApsaraVideo VOD's videos and images, OSS's objects and multipart uploads, and the temporary credentials
/// that tie them together.
extension SandboxState {
    // MARK: Credentials

    /// Issues a temporary credential for one object, valid for the configured `stsTTL`.
    func issueCredential(bucket: String, object: String) -> STSCredential {
        let credential = STSCredential(
            accessKeyID: "STS." + RandomID.hex(bytes: 12), accessKeySecret: RandomID.hex(bytes: 20),
            securityToken: "CAIS" + RandomID.hex(bytes: 48),
            expiresAt: Date().addingTimeInterval(Self.seconds(self.configuration.stsTTL)), bucket: bucket,
            object: object)
        self.stsCredentials[credential.accessKeyID] = credential
        return credential
    }

    /// The secret of an access key id: a configured AccessKey pair's, or a temporary credential's (with it).
    func secret(ofAccessKey id: String) -> (secret: String, temporary: STSCredential?)? {
        if let secret = self.configuration.aliyunAccessKeys[id] { return (secret, nil) }
        return self.stsCredentials[id].map { ($0.accessKeySecret, $0) }
    }

    /// Accepts an RPC `SignatureNonce` once; nonces older than the timestamp window are forgotten.
    func useNonce(_ nonce: String) -> Bool {
        let now = Date()
        self.rpcNonces = self.rpcNonces.filter { now.timeIntervalSince($0.value) < 15 * 60 }
        guard self.rpcNonces[nonce] == nil else { return false }
        self.rpcNonces[nonce] = now
        return true
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    // MARK: VOD

    /// `CreateUploadVideo`: a video whose source is to be uploaded to a new object of the bucket.
    func createVODVideo(_ video: VODVideoRecord) throws -> VODVideoRecord {
        if let reference = video.referenceID,
            self.index.aliyun.videos.values.contains(where: { $0.referenceID == reference })
        {
            throw VODError(
                status: .badRequest, code: "InvalidParameter.ReferenceId",
                message: "The ReferenceId \(reference) is already used by another video.")
        }
        self.index.aliyun.videos[video.id] = video
        self.persist()
        return video
    }

    /// A video by `VideoId`, or by `ReferenceId` when no id is given.
    func vodVideo(id: String?, referenceID: String?) -> VODVideoRecord? {
        if let id { return self.index.aliyun.videos[id] }
        guard let referenceID else { return nil }
        return self.index.aliyun.videos.values.first { $0.referenceID == referenceID }
    }

    /// `UpdateVideoInfo`: replaces the fields given.
    func updateVODVideo(_ id: String, _ change: @Sendable (inout VODVideoRecord) -> Void) throws -> VODVideoRecord {
        guard var video = self.index.aliyun.videos[id] else { throw VODError.videoNotFound }
        change(&video)
        video.modifiedAt = Date()
        self.index.aliyun.videos[id] = video
        self.persist()
        return video
    }

    /// `DeleteVideo`: removes the videos and their source objects; returns the ids that did not exist.
    func deleteVODVideos(_ ids: [String]) -> [String] {
        var missing: [String] = []
        for id in ids {
            guard let video = self.index.aliyun.videos.removeValue(forKey: id) else {
                missing.append(id)
                continue
            }
            self.removeObject(bucket: video.bucket, key: video.object)
        }
        self.persist()
        return missing
    }

    /// A video's `Status`: `Uploading` until its source object is complete, then `UploadSucc`, `Transcoding`
    /// and `Normal` as the transcode delay passes (half of it each).
    func vodStatus(_ video: VODVideoRecord) -> String {
        guard let uploadedAt = video.uploadedAt else { return "Uploading" }
        let elapsed = Date().timeIntervalSince(uploadedAt)
        let delay = Self.seconds(self.configuration.transcodeDelay)
        if elapsed < delay / 2 { return "UploadSucc" }
        return elapsed < delay ? "Transcoding" : "Normal"
    }

    /// `CreateUploadImage`.
    func createVODImage(_ image: VODImageRecord) -> VODImageRecord {
        self.index.aliyun.images[image.id] = image
        self.persist()
        return image
    }

    func vodImage(_ id: String) -> VODImageRecord? {
        self.index.aliyun.images[id]
    }

    // MARK: OSS

    func ossObject(bucket: String, key: String) -> OSSObjectRecord? {
        self.index.aliyun.objects[bucket + "/" + key]
    }

    /// Stores an object whose bytes are already in its file, replacing an earlier one; a VOD video or image
    /// whose source it is has now arrived.
    func putObject(_ object: OSSObjectRecord) {
        let name = object.bucket + "/" + object.key
        if let earlier = self.index.aliyun.objects[name], earlier.fileID != object.fileID {
            self.folder.removeUpload("oss-" + earlier.fileID)
        }
        self.index.aliyun.objects[name] = object
        let now = Date()
        for (id, video) in self.index.aliyun.videos where video.bucket == object.bucket && video.object == object.key {
            self.index.aliyun.videos[id]?.uploadedAt = now
            self.index.aliyun.videos[id]?.size = object.size
        }
        for (id, image) in self.index.aliyun.images where image.bucket == object.bucket && image.object == object.key {
            self.index.aliyun.images[id]?.uploadedAt = now
        }
        self.persist()
    }

    /// Removes an object and its file; false when there was none.
    @discardableResult
    func removeObject(bucket: String, key: String) -> Bool {
        guard let object = self.index.aliyun.objects.removeValue(forKey: bucket + "/" + key) else { return false }
        self.folder.removeUpload("oss-" + object.fileID)
        self.persist()
        return true
    }

    func initiateMultipart(bucket: String, key: String, contentType: String) -> OSSMultipartRecord {
        let upload = OSSMultipartRecord(
            id: RandomID.hex(bytes: 16).uppercased(), bucket: bucket, key: key, contentType: contentType, parts: [],
            createdAt: Date())
        self.index.aliyun.multipartUploads[upload.id] = upload
        self.persist()
        return upload
    }

    /// A multipart upload of `bucket/key`, or `NoSuchUpload`.
    func multipart(_ id: String, bucket: String, key: String) throws -> OSSMultipartRecord {
        guard let upload = self.index.aliyun.multipartUploads[id], upload.bucket == bucket, upload.key == key else {
            throw OSSError.noSuchUpload
        }
        return upload
    }

    func multipartUploads(bucket: String) -> [OSSMultipartRecord] {
        self.index.aliyun.multipartUploads.values.filter { $0.bucket == bucket }.sorted { $0.key < $1.key }
    }

    /// Records a part whose bytes are in its file (a part sent again replaces the earlier one).
    func recordPart(_ part: OSSPartRecord, uploadID: String) throws {
        guard var upload = self.index.aliyun.multipartUploads[uploadID] else { throw OSSError.noSuchUpload }
        upload.parts.removeAll { $0.number == part.number }
        upload.parts.append(part)
        upload.parts.sort { $0.number < $1.number }
        self.index.aliyun.multipartUploads[uploadID] = upload
        self.ossPartsStored += 1
        self.persist()
    }

    /// Ends a multipart upload (completed or aborted): its record and part files go.
    func endMultipart(_ id: String) {
        guard let upload = self.index.aliyun.multipartUploads.removeValue(forKey: id) else { return }
        for part in upload.parts { self.folder.removeUpload(Self.partFile(uploadID: id, number: part.number)) }
        self.persist()
    }

    /// The name (under `uploads/`, without `.bin`) of a part's file.
    static func partFile(uploadID: String, number: Int) -> String {
        "oss-part-\(uploadID)-\(number)"
    }

    /// Everything Alibaba Cloud's part of the sandbox holds, for `GET /sandbox/aliyun`.
    func aliyunSnapshot() -> AliyunIndex {
        self.index.aliyun
    }
}
