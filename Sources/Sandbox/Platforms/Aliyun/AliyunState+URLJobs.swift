import Foundation
import Logging
import StageKit

/// VOD's URL-based uploads (`UploadMediaByURL`): jobs, their fetches, and the videos they make.
extension AliyunState {
    /// Records `jobs` and starts fetching each; refuses a `session` used within ``sessionWindow``.
    func submitURLJobs(_ jobs: [VODURLJobRecord], session: String?) throws {
        if let session,
            self.records.urlJobs.values.contains(where: {
                $0.sessionID == session && Date().timeIntervalSince($0.createdAt) < self.sessionWindow
            })
        {
            throw VODError.invalid("SessionId", "a request with this SessionId was made in the last 10 minutes")
        }
        for job in jobs { self.records.urlJobs[job.id] = job }
        self.core.index.persist()
        for job in jobs {
            let fetch = URLJobFetch(aliyun: self)
            self.urlFetches[job.id] = Task { await fetch.run(job) }
        }
    }

    /// The jobs of `ids` that exist, in that order.
    func urlJobs(ids: [String]) -> [VODURLJobRecord] {
        ids.compactMap { self.records.urlJobs[$0] }
    }

    /// The jobs of any of `urls` that the listing shows (older than ``urlListingLag``), oldest first.
    func urlJobs(urls: [String]) -> [VODURLJobRecord] {
        self.records.urlJobs.values.filter {
            urls.contains($0.uploadURL) && Date().timeIntervalSince($0.createdAt) >= self.urlListingLag
        }.sorted { $0.createdAt < $1.createdAt }
    }

    /// Sets the listing lag, the `SessionId` window and how many next jobs' transcodes fail (the faults of
    /// `POST /sandbox/aliyun/faults`).
    func setURLJobFaults(listingLag: TimeInterval?, sessionWindow: TimeInterval?, transcodesToFail: Int?) {
        if let listingLag { self.urlListingLag = max(0, listingLag) }
        if let sessionWindow { self.sessionWindow = max(0, sessionWindow) }
        if let transcodesToFail { self.urlTranscodesToFail = max(0, transcodesToFail) }
    }

    /// Changes a job (its status, its outcome).
    func updateURLJob(_ id: String, _ change: @Sendable (inout VODURLJobRecord) -> Void) {
        guard var job = self.records.urlJobs[id] else { return }
        change(&job)
        if job.completedAt != nil { self.urlFetches[id] = nil }
        self.records.urlJobs[id] = job
        self.core.index.persist()
    }

    /// A job whose file arrived as OSS file `fileID`: the video it makes (its source that object, already
    /// uploaded) and the job's `SUCCESS`, or, while ``urlTranscodesToFail`` counts, a video whose transcode fails
    /// and the job's `TranscodeFail` with its MediaId.
    func finishURLJob(_ job: VODURLJobRecord, fileID: String, size: Int64, md5: String) throws {
        let id = RandomID.hex(bytes: 16)
        let transcodeFails = self.urlTranscodesToFail > 0
        if transcodeFails { self.urlTranscodesToFail -= 1 }
        let url = URL(string: job.uploadURL)
        let fileExtension = (job.metadata["FileExtension"] ?? url?.pathExtension ?? "mp4").lowercased()
        let now = Date()
        let video = VODVideoRecord(
            id: id, title: job.metadata["Title"] ?? url?.deletingPathExtension().lastPathComponent ?? id,
            fileName: url?.lastPathComponent ?? "\(id).\(fileExtension)", fileSize: size,
            description: job.metadata["Description"], coverURL: job.metadata["CoverURL"],
            cateID: job.metadata["CateId"].flatMap { Int64($0) }, tags: job.metadata["Tags"],
            templateGroupID: job.templateGroupID, userData: job.userData, referenceID: nil,
            bucket: self.core.configuration.ossBucket,
            object: "sv/\(id.prefix(8))-\(RandomID.hex(bytes: 5))/\(id).\(fileExtension)", uploadedAt: nil, size: nil,
            transcodeFails: transcodeFails ? true : nil, createdAt: now, modifiedAt: now)
        _ = try self.createVODVideo(video)
        self.putObject(
            OSSObjectRecord(
                bucket: video.bucket, key: video.object, fileID: fileID, size: size, etag: "\"\(md5)\"",
                contentType: "application/octet-stream", modifiedAt: now))
        self.updateURLJob(job.id) {
            $0.status = transcodeFails ? "TranscodeFail" : "SUCCESS"
            $0.mediaID = id
            $0.fileSize = size
            $0.errorCode = transcodeFails ? "TranscodeFail" : "200"
            $0.errorMessage = transcodeFails ? "transcoding the video failed" : "Success"
            $0.completedAt = Date()
        }
    }

    /// A job whose fetch failed: `status` (`DOWNLOAD_FAIL`, `UPLOAD_FAIL`) with its code and message.
    func failURLJob(_ id: String, status: String, code: String, message: String) {
        self.core.logger.warning("sandbox: URL upload job \(id) failed: \(message)")
        self.updateURLJob(id) {
            $0.status = status
            $0.errorCode = code
            $0.errorMessage = message
            $0.completedAt = Date()
        }
    }

    /// Stops every fetch under way (the sandbox is stopping); the next start marks their jobs failed.
    func cancelURLFetches() {
        for task in self.urlFetches.values { task.cancel() }
        self.urlFetches = [:]
    }
}
