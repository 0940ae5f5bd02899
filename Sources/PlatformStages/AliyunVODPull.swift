import Foundation
import HTTPTransport
import Logging
import StageKit

/// One run of `aliyun.vod.pull`: the submission (`UploadMediaByURL`), the look-up of a submission that was never
/// answered, and the following of the job (`GetURLUploadInfos`).
struct VODPull {
    let options: AliyunVODPullStage.Options
    let context: StageContext
    let api: AliyunVODAPI
    let title: String

    init(options: AliyunVODPullStage.Options, context: StageContext) throws {
        self.options = options
        self.context = context
        api = try options.connection.connect(context: context)
        let name = URL(string: options.link)?.deletingPathExtension().lastPathComponent ?? ""
        let title = options.title ?? (name.removingPercentEncoding ?? name)
        self.title = try VODLimits.title(title, fit: options.fitTitle)
    }

    /// What is wrong with `link` as a source VOD can pull, or nil: an http(s) URL with a host, whose path (or
    /// `fileExtension`) names an extension UploadMediaByURL takes.
    static func problem(withLink link: String, fileExtension: String?) -> String? {
        guard let url = URL(string: link), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            url.host?.isEmpty == false
        else { return "\(link) is not an http or https URL" }
        let given = fileExtension.map { $0.hasPrefix(".") ? String($0.dropFirst()) : $0 }
        let name = "file." + (given ?? url.pathExtension)
        guard let problem = VODLimits.problem(withFileName: name) else { return nil }
        return given == nil ? "the URL's path names no extension VOD takes (give fileExtension): \(problem)" : problem
    }

    /// The URL as UploadMediaByURL and GetURLUploadInfos take it: percent-encoded (the documented "URL encoding
    /// is required"), so that commas separate URLs.
    var encodedLink: String { AliyunVODAPI.percentEncode(options.link) }

    /// The URL without its query, for messages: a presigned URL's query is its credential.
    var shownLink: String { options.link.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "" }

    /// `UploadMediaByURL`, its marker recorded before and its job after; returns the job's id. `earlier` is the
    /// record of a submission with the same marker that may have made a job (never answered, or a server error):
    /// it stays recorded as it is whatever this one meets, so no later run takes the job for one never made.
    func submit(marker: String, earlier: CreateIntent?, failures: Int) async throws -> String {
        var metadata: [String: JSONValue] = ["SourceURL": .string(encodedLink), "Title": .string(title)]
        metadata["Description"] = options.description.map(JSONValue.string)
        metadata["Tags"] = options.tags.map { .string(VODLimits.normalized(tags: $0)) }
        metadata["CateId"] = options.cateId.map { .int($0) }
        metadata["CoverURL"] = options.coverURL.map(JSONValue.string)
        metadata["FileExtension"] = options.fileExtension.map(JSONValue.string)
        var parameters = [
            "UploadURLs": encodedLink, "UploadMetadatas": JSONValue.array([.object(metadata)]).serialized(),
            "SessionId": marker, "UserData": try userData(marker: marker).serialized(),
        ]
        parameters["TemplateGroupId"] = options.templateGroupId
        parameters["StorageLocation"] = options.storageLocation
        let action = "asking VOD to pull \(shownLink) (UploadMediaByURL)"
        let intent = earlier ?? CreateIntent(marker: marker, sentAt: Date())
        try await context.checkpoint(AliyunVODPullStage.Checkpoint(intent: intent, failures: failures))
        let answer: JSONValue
        do {
            answer = try await api.call("UploadMediaByURL", parameters, doing: action)
        } catch {
            if earlier != nil {
                throw Self.resubmissionFailure(error, marker: marker, link: shownLink)
            }
            if var answered = CreateIntent(marker: marker, after: error) {
                answered.sentAt = intent.sentAt
                try await context.checkpoint(AliyunVODPullStage.Checkpoint(intent: answered, failures: failures))
            }
            throw error
        }
        guard let job = answer["UploadJobs"]?.arrayValue?.first, let jobId = job["JobId"]?.stringValue, !jobId.isEmpty
        else { throw PlatformError(.invalidResponse, "\(action): the answer names no UploadJobs[].JobId") }
        try await context.checkpoint(
            AliyunVODPullStage.Checkpoint(intent: CreateIntent(marker: marker), jobId: jobId, failures: failures))
        context.logger.info("VOD queued pull job \(jobId)")
        return jobId
    }

    /// When a presigned `link` stops working, from its own query: OSS V4's `x-oss-date` and `x-oss-expires`, S3's
    /// `X-Amz-Date` and `X-Amz-Expires`, or OSS V1's `Expires` (seconds since 1970); nil for a URL that says none.
    static func expiry(ofLink link: String) -> Date? {
        guard let items = URLComponents(string: link)?.queryItems else { return nil }
        var query: [String: String] = [:]
        for item in items { query[item.name.lowercased()] = item.value ?? "" }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        for (date, expires) in [("x-oss-date", "x-oss-expires"), ("x-amz-date", "x-amz-expires")] {
            if let signed = query[date].flatMap(formatter.date(from:)),
                let seconds = query[expires].flatMap(Double.init)
            {
                return signed.addingTimeInterval(seconds)
            }
        }
        return query["expires"].flatMap(Double.init).map(Date.init(timeIntervalSince1970:))
    }

    /// A presigned link that has expired fails before it is submitted (VOD would queue the job and fail it with
    /// `URLInvalidError` later): fatal, with the remedy.
    func checkLinkExpiry(now: Date = Date()) throws {
        guard let expiry = Self.expiry(ofLink: options.link) else { return }
        let when = ISO8601DateFormatter().string(from: expiry)
        guard expiry > now else {
            throw StageFailure(
                "the presigned URL \(shownLink) expired at \(when): VOD could not fetch it; sign a new one (run the stage that made it again, e.g. with --reprocess, and give it a longer shareFor or a credential that lives longer)",
                kind: .invalidInput)
        }
        if expiry.timeIntervalSince(now) < 3600 {
            context.logger.warning(
                "the presigned URL \(shownLink) expires at \(when): VOD queues pulls and may fetch it later than that")
        }
    }

    /// How long VOD refuses a repeated `SessionId`: 10 minutes, as documented, less a minute for the request's
    /// travel. Within it a submission may go again with the same marker (VOD refuses it if the first arrived).
    static let sessionWindow: TimeInterval = 9 * 60

    /// Whether a submission may go again after `earlier`, a submission with the same marker that may have made a
    /// job the look-up did not find: only while VOD still refuses its `SessionId`, so the repeat cannot make a
    /// second job. Past that (or with no time recorded), the stage fails instead, retryably: a later attempt looks
    /// for the job again.
    static func resubmissionProblem(after earlier: CreateIntent, link: String, now: Date = Date()) -> StageFailure? {
        if let sentAt = earlier.sentAt, now.timeIntervalSince(sentAt) < sessionWindow { return nil }
        let when = earlier.sentAt.map { " at \(ISO8601DateFormatter().string(from: $0))" } ?? ""
        return StageFailure.retryable(
            "a pull of \(link) submitted\(when) with SessionId \(earlier.marker) may have made a job that "
                + "GetURLUploadInfos does not list, and VOD refuses a repeated SessionId only for 10 minutes: "
                + "submitting again could make a second video, so it is not done. A later attempt looks for the job "
                + "again; if VOD has none (see its URL upload jobs), `pipeline run --reprocess` submits anew",
            kind: .failed)
    }

    /// The failure of a submission repeated after one that may have made a job: a refusal most likely means VOD
    /// refused the `SessionId` because the first arrived (retryable: a later attempt looks for its job again).
    static func resubmissionFailure(_ error: any Error, marker: String, link: String) -> any Error {
        guard let failure = error as? HTTPFailure, failure.refusedRequest else { return error }
        return StageFailure.retryable(
            "VOD refused the pull of \(link) submitted again with SessionId \(marker) (\(failure.message)): the "
                + "earlier submission most likely arrived and made a job that GetURLUploadInfos does not list yet; a "
                + "later attempt looks for it again")
    }

    /// The `UserData` sent: the option's JSON with the marker under `Extend.PipelineMarker`.
    func userData(marker: String) throws -> JSONValue {
        var data: [String: JSONValue] = [:]
        if let text = options.userData, !text.isEmpty {
            guard let object = (try? JSONValue(parsing: Data(text.utf8)))?.objectValue else {
                throw StageFailure("userData must be a JSON object", kind: .invalidOptions)
            }
            data = object
        }
        var extend = Self.object(data["Extend"]) ?? [:]
        extend["PipelineMarker"] = .string(marker)
        data["Extend"] = .object(extend)
        return .object(data)
    }

    /// A JSON object, or the object a JSON string holds (VOD's examples write `Extend` both ways).
    static func object(_ value: JSONValue?) -> [String: JSONValue]? {
        if let object = value?.objectValue { return object }
        guard let text = value?.stringValue else { return nil }
        return (try? JSONValue(parsing: Data(text.utf8)))?.objectValue
    }

    /// The job a submission that was never answered made: GetURLUploadInfos by URL, the job whose `UserData`
    /// carries `marker`; nil when there is none after `wait`.
    func lookUp(marker: String, waiting wait: TimeSpan) async throws -> String? {
        let found = try await PlatformStages.lookUp(
            waiting: wait, for: "a pull job of \(shownLink) with marker \(marker)", logger: context.logger
        ) {
            let answer = try await api.call(
                "GetURLUploadInfos", ["UploadURLs": encodedLink], doing: "looking for the job of an unanswered pull")
            return (answer["URLUploadInfoList"]?.arrayValue ?? []).filter { job in
                let extend = Self.object(Self.object(job["UserData"])?["Extend"])
                return extend?["PipelineMarker"]?.stringValue == marker
            }
        }
        return found.first?["JobId"]?.stringValue
    }

    /// Polls GetURLUploadInfos until the job has pulled its file (its MediaId is the video, whatever became of the
    /// video's transcode) or failed without a video.
    func follow(_ jobId: String, failures: Int) async throws -> AliyunVODPullStage.Outputs {
        var outputs = AliyunVODPullStage.Outputs.with {
            $0.jobId = jobId
            $0.created = true
        }
        var missingSince: ContinuousClock.Instant?
        try await poll(every: options.interval, for: options.timeout, what: "VOD's pull of \(shownLink)") {
            let answer = try await api.call(
                "GetURLUploadInfos", ["JobIds": jobId], doing: "checking pull job \(jobId) (GetURLUploadInfos)")
            guard let job = answer["URLUploadInfoList"]?.arrayValue?.first(where: { $0["JobId"]?.stringValue == jobId })
            else {
                // A job just made may not be listed yet: it is missing only once it stays so for a minute.
                let since = missingSince ?? ContinuousClock.now
                missingSince = since
                if ContinuousClock.now - since < Self.missingGrace { return false }
                throw PlatformError(
                    .notFound,
                    "pull job \(jobId) does not exist (GetURLUploadInfos: NonExists for \(Self.missingGrace))")
            }
            missingSince = nil
            let status = job["Status"]?.stringValue ?? ""
            let media = job["MediaId"]?.stringValue ?? ""
            if media.isEmpty, Self.hasFailed(status) {
                try await context.checkpoint(AliyunVODPullStage.Checkpoint(failures: failures + 1))
                throw Self.failure(job, status: status, link: shownLink)
            }
            guard Self.hasPulled(status, mediaId: media) else { return false }
            if Self.hasFailed(status) {
                context.logger.warning(
                    "VOD pulled \(shownLink) into video \(media), whose status is \(status): the wait for the video reports it"
                )
            }
            outputs.videoId = media
            outputs.size = job["FileSize"]?.intValue ?? job["FileSize"]?.stringValue.flatMap { Int($0) } ?? 0
            return true
        }
        context.logger.info("VOD pulled \(shownLink) into video \(outputs.videoId)")
        return outputs
    }

    /// How long a followed job may be missing from GetURLUploadInfos (NonExists) before the stage says it does not
    /// exist: a listing can lag behind the job's creation.
    static let missingGrace = Duration.seconds(60)

    /// The statuses, upper-cased, that say a job's video exists past its upload (a video's own statuses, which
    /// VOD's Chinese reference shows for a finished job: `Normal` with ErrorCode `200`).
    static let videoStatuses: Set<String> = ["UPLOADSUCC", "TRANSCODING", "CHECKING", "NORMAL"]

    /// Whether a job has pulled its file: it has a MediaId (the video exists) and has ended, with `SUCCESS` (VOD's
    /// English example; the UploadByURLComplete event writes `success`), a video status past the upload, or a
    /// failure of the video after it (`TranscodeFail`, …: the job's statuses are its video's). A failed video is
    /// the video's own outcome, which `aliyun.vod.wait` reports; pulling again would make a second video. Compared
    /// without case. VOD's table of URL-upload statuses could not be confirmed, so this accepts every form its
    /// documents show.
    static func hasPulled(_ status: String, mediaId: String) -> Bool {
        let upper = status.uppercased()
        return !mediaId.isEmpty && (upper == "SUCCESS" || videoStatuses.contains(upper) || hasFailed(status))
    }

    /// Whether a job's status is a failure, without case: VOD's URL-upload statuses end in `FAIL`
    /// (`DOWNLOAD_FAIL`, `UPLOAD_FAIL`, the event's `fail`, …); the others (`PENDING`, `PROCESSING`,
    /// `DOWNLOADING`, …) mean it is still under way.
    static func hasFailed(_ status: String) -> Bool {
        let upper = status.uppercased()
        return upper.hasSuffix("FAIL") || upper.hasSuffix("FAILED")
    }

    /// The failure of a job, a source VOD cannot use (invalid-input), with VOD's ErrorCode and ErrorMessage. The
    /// one code VOD documents for a pull, `URLInvalidError` ("download video failed by the url"), gets the
    /// remedy; VOD does not say what the source answered. Only a job without a MediaId fails so (no video was
    /// made). Fatal: a later run submits a new job.
    static func failure(_ job: JSONValue, status: String, link: String) -> StageFailure {
        let code = job["ErrorCode"]?.stringValue ?? ""
        let said = [code, job["ErrorMessage"]?.stringValue ?? ""].filter { !$0.isEmpty }.joined(separator: ": ")
        let remedy =
            code == "URLInvalidError"
            ? ": VOD could not download the URL (it must answer VOD's servers, and a presigned URL must not have expired)"
            : ""
        return StageFailure(
            "VOD could not pull \(link): \(status)\(said.isEmpty ? "" : " (\(said))")\(remedy)", kind: .invalidInput)
    }
}
