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
        if options.fitTitle {
            self.title = try VODLimits.fitted(title: title)
        } else if let problem = VODLimits.problem(with: title, field: "Title", length: VODLimits.titleLength) {
            throw PlatformError(.invalidInput, "\(problem) (fitTitle: true shortens it)")
        } else {
            self.title = title
        }
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

    /// `UploadMediaByURL`, its marker recorded before and its job after; returns the job's id.
    func submit(marker: String, failures: Int) async throws -> String {
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
        try await context.checkpoint(
            AliyunVODPullStage.Checkpoint(intent: CreateIntent(marker: marker), failures: failures))
        let answer: JSONValue
        do {
            answer = try await api.call("UploadMediaByURL", parameters, doing: action)
        } catch {
            if let intent = CreateIntent(marker: marker, after: error) {
                try await context.checkpoint(AliyunVODPullStage.Checkpoint(intent: intent, failures: failures))
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

    /// Polls GetURLUploadInfos until the job succeeded (its MediaId is the video) or failed.
    func follow(_ jobId: String, failures: Int) async throws -> AliyunVODPullStage.Outputs {
        var outputs = AliyunVODPullStage.Outputs.with {
            $0.jobId = jobId
            $0.created = true
        }
        try await poll(every: options.interval, for: options.timeout, what: "VOD's pull of \(shownLink)") {
            let answer = try await api.call(
                "GetURLUploadInfos", ["JobIds": jobId], doing: "checking pull job \(jobId) (GetURLUploadInfos)")
            guard let job = answer["URLUploadInfoList"]?.arrayValue?.first(where: { $0["JobId"]?.stringValue == jobId })
            else { throw PlatformError(.notFound, "pull job \(jobId) does not exist (GetURLUploadInfos: NonExists)") }
            let status = job["Status"]?.stringValue ?? ""
            if Self.hasFailed(status) {
                try await context.checkpoint(AliyunVODPullStage.Checkpoint(failures: failures + 1))
                throw Self.failure(job, status: status, link: shownLink)
            }
            let media = job["MediaId"]?.stringValue ?? ""
            guard Self.hasSucceeded(status, mediaId: media) else { return false }
            outputs.videoId = media
            outputs.size = job["FileSize"]?.intValue ?? job["FileSize"]?.stringValue.flatMap { Int($0) } ?? 0
            return true
        }
        context.logger.info("VOD pulled \(shownLink) into video \(outputs.videoId)")
        return outputs
    }

    /// The statuses, upper-cased, that say a job's video exists past its upload (a video's own statuses, which
    /// VOD's Chinese reference shows for a finished job: `Normal` with ErrorCode `200`).
    static let videoStatuses: Set<String> = ["UPLOADSUCC", "TRANSCODING", "CHECKING", "NORMAL"]

    /// Whether a job is done: a MediaId, and `SUCCESS` (VOD's English example; the UploadByURLComplete event
    /// writes `success`) or a video status past the upload. Compared without case. VOD's table of URL-upload
    /// statuses could not be confirmed, so this accepts every form its documents show.
    static func hasSucceeded(_ status: String, mediaId: String) -> Bool {
        let upper = status.uppercased()
        return !mediaId.isEmpty && (upper == "SUCCESS" || videoStatuses.contains(upper))
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
    /// remedy; VOD does not say what the source answered. Fatal: a later run submits a new job.
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
