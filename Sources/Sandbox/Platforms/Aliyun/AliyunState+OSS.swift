import Foundation
import StageKit

/// OSS: the bucket's objects and multipart uploads.
extension AliyunState {
    /// The object `key` of `bucket`, `nil` when there is none (OSS answers `NoSuchKey`).
    func ossObject(bucket: String, key: String) -> OSSObjectRecord? {
        self.records.objects[bucket + "/" + key]
    }

    /// Stores an object whose bytes are already in its file, replacing an earlier one; a VOD video or image
    /// whose source it is has now arrived.
    func putObject(_ object: OSSObjectRecord) {
        let name = object.bucket + "/" + object.key
        if let earlier = self.records.objects[name], earlier.fileID != object.fileID {
            self.core.folder.removeUpload(OSSFiles.object(earlier.fileID))
        }
        self.records.objects[name] = object
        let now = Date()
        for (id, video) in self.records.videos where video.bucket == object.bucket && video.object == object.key {
            self.records.videos[id]?.uploadedAt = now
            self.records.videos[id]?.size = object.size
        }
        for (id, image) in self.records.images where image.bucket == object.bucket && image.object == object.key {
            self.records.images[id]?.uploadedAt = now
        }
        self.core.index.persist()
    }

    /// Removes an object and its file; false when there was none.
    @discardableResult
    func removeObject(bucket: String, key: String) -> Bool {
        guard let object = self.records.objects.removeValue(forKey: bucket + "/" + key) else { return false }
        self.core.folder.removeUpload(OSSFiles.object(object.fileID))
        self.core.index.persist()
        return true
    }

    /// `InitiateMultipartUpload`: a multipart upload of `bucket/key` with a new upload id (32 upper-case hex
    /// digits, as OSS's), recorded in the index so its parts survive a restart.
    func initiateMultipart(bucket: String, key: String, contentType: String) -> OSSMultipartRecord {
        let upload = OSSMultipartRecord(
            id: RandomID.hex(bytes: 16).uppercased(), bucket: bucket, key: key, contentType: contentType, parts: [],
            createdAt: Date())
        self.records.multipartUploads[upload.id] = upload
        self.core.index.persist()
        return upload
    }

    /// A multipart upload of `bucket/key`, or `NoSuchUpload`.
    func multipart(_ id: String, bucket: String, key: String) throws -> OSSMultipartRecord {
        guard let upload = self.records.multipartUploads[id], upload.bucket == bucket, upload.key == key else {
            throw OSSError.noSuchUpload
        }
        return upload
    }

    /// `ListMultipartUploads`: the multipart uploads of `bucket` still open, by key, as OSS lists them.
    func multipartUploads(bucket: String) -> [OSSMultipartRecord] {
        self.records.multipartUploads.values.filter { $0.bucket == bucket }.sorted { $0.key < $1.key }
    }

    /// Records a part whose bytes are in its file (a part sent again replaces the earlier one).
    func recordPart(_ part: OSSPartRecord, uploadID: String) throws {
        guard var upload = self.records.multipartUploads[uploadID] else { throw OSSError.noSuchUpload }
        upload.parts.removeAll { $0.number == part.number }
        upload.parts.append(part)
        upload.parts.sort { $0.number < $1.number }
        self.records.multipartUploads[uploadID] = upload
        self.ossPartsStored += 1
        self.core.index.persist()
    }

    /// Ends a multipart upload (completed or aborted): its record and part files go.
    func endMultipart(_ id: String) {
        guard let upload = self.records.multipartUploads.removeValue(forKey: id) else { return }
        for part in upload.parts { self.core.folder.removeUpload(OSSFiles.part(uploadID: id, number: part.number)) }
        self.core.index.persist()
    }

    /// Drops the answers of the next `count` CompleteMultipartUploads.
    func dropCompleteAnswers(_ count: Int) {
        self.completeAnswersToDrop = max(0, count)
    }

    /// Refuses the next `count` CompleteMultipartUploads.
    func refuseCompletes(_ count: Int) {
        self.completesToRefuse = max(0, count)
    }

    /// Loses the next `completes` CompleteMultipartUploads, answers the next `failedAnswers` with 500 once they
    /// completed, and refuses the next `listParts` ListParts (nil leaves a fault as it was).
    func setMultipartFaults(
        loseCompletes completes: Int?, failCompleteAnswers failedAnswers: Int?, refuseListParts listParts: Int?
    ) {
        if let completes { self.completesToLose = max(0, completes) }
        if let failedAnswers { self.completesToFailAnswering = max(0, failedAnswers) }
        if let listParts { self.listPartsToRefuse = max(0, listParts) }
    }

    /// Whether to answer this completed CompleteMultipartUpload with 500 (one fewer to fail).
    func takeCompleteAnswerFailure() -> Bool {
        guard self.completesToFailAnswering > 0 else { return false }
        self.completesToFailAnswering -= 1
        return true
    }

    /// Whether to lose this CompleteMultipartUpload (one fewer to lose).
    func takeCompleteLoss() -> Bool {
        guard self.completesToLose > 0 else { return false }
        self.completesToLose -= 1
        return true
    }

    /// Whether to refuse this ListParts (one fewer to refuse).
    func takeListPartsRefusal() -> Bool {
        guard self.listPartsToRefuse > 0 else { return false }
        self.listPartsToRefuse -= 1
        return true
    }

    /// Whether to refuse this CompleteMultipartUpload (one fewer to refuse).
    func takeCompleteRefusal() -> Bool {
        guard self.completesToRefuse > 0 else { return false }
        self.completesToRefuse -= 1
        return true
    }

    /// Whether to drop this CompleteMultipartUpload's answer (one fewer to drop).
    func takeCompleteAnswerDrop() -> Bool {
        guard self.completeAnswersToDrop > 0 else { return false }
        self.completeAnswersToDrop -= 1
        return true
    }

    /// Everything Alibaba Cloud's part of the sandbox holds, for `GET /sandbox/aliyun`.
    func snapshot() -> AliyunRecords {
        self.records
    }
}
