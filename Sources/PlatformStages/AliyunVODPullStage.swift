import Foundation
import HTTPTransport
import Logging
public import StageKit

/// `aliyun.vod.pull`: ApsaraVideo VOD fetches the file from a URL itself (`UploadMediaByURL`), as Vimeo's
/// `approach: pull` does: nothing is uploaded from here. The URL is typically an `oss.upload` or `s3.upload`
/// with `shareFor` (`${store.sharedURL}`), so an export streamed to a bucket is published without a second
/// upload. The stage then follows the job (`GetURLUploadInfos`) until VOD has made the video, and outputs its
/// id for `aliyun.vod.wait`, `aliyun.vod.metadata` and an `onCancel` that deletes it.
///
/// Every submission makes a new video, so the job is never submitted twice for one item version: a marker is
/// recorded durably before the request, sent as the `SessionId` (VOD refuses the same one within 10 minutes) and
/// in `UserData`, and the job's id is recorded once answered. A rerun after a crash follows the recorded job; after
/// a submission that was never answered, it looks the job up by its URL (`GetURLUploadInfos` with `UploadURLs`)
/// and adopts the one that carries the marker.
public struct AliyunVODPullStage: Stage {
    /// The options of `aliyun.vod.pull`.
    public struct Options: StageOptions {
        /// The VOD API and the AccessKey.
        @OptionGroup public var connection: AliyunConnection
        /// The URL VOD fetches the file from.
        @Option(
            "The http or https URL VOD fetches the file from, e.g. ${store.sharedURL} of an oss.upload or s3.upload with shareFor; its path names the file's extension unless fileExtension does."
        )
        public var link: String
        /// The file's extension, when the URL's path has none.
        @Option("The file's extension (mp4, mov, …) when the URL's path has none.") public var fileExtension: String?
        /// Title (default: the URL's file name without extension).
        @Option("Title, at most 128 characters and no emoji (default: the URL's file name without extension).")
        public var title: String?
        /// Shorten a title beyond VOD's limit instead of failing.
        @Option("Make a title that VOD would refuse fit instead of failing: emoji left out, cut to 128 characters.")
        public var fitTitle = false
        /// Description.
        @Option("Description, at most 1,024 characters.") public var description: String?
        /// Tags, comma-separated.
        @Option("Tags, comma-separated: at most 16, each at most 32 characters.") public var tags: String?
        /// Category id.
        @Option("Category id.") public var cateId: Int?
        /// Cover image URL.
        @Option("Cover image URL.") public var coverURL: String?
        /// Transcode template group id.
        @Option("Transcode template group id.") public var templateGroupId: String?
        /// Storage location of the video.
        @Option("Storage location of the video (default: the account's).") public var storageLocation: String?
        /// UserData JSON (callbacks and extensions).
        @Option("UserData JSON (callbacks and extensions); the stage adds its marker under Extend.")
        public var userData: String?
        /// After a submission that was never answered, how long to look for its job before submitting again.
        @Option(
            "After a submission that was never answered, how long to look for its job (by URL) before submitting again."
        )
        public var reconcileWait = TimeSpan(seconds: 10)
        /// The longest wait for VOD to fetch the file.
        @Option("The longest wait for VOD to fetch the file (VOD queues pulls per region).", minimum: 0)
        public var timeout = TimeSpan(seconds: 7200)
        /// Time between checks of the job.
        @Option("Time between checks of the job (GetURLUploadInfos).", minimum: 0)
        public var interval = TimeSpan(seconds: 5)

        public init() {}

        /// A literal `link` must be an http(s) URL whose path names an extension VOD takes (or `fileExtension`
        /// must); VOD's limits on the texts (``VODLimits``).
        public static func problems(in with: JSONValue) -> [OptionProblem] {
            var problems = VODLimits.problems(in: with, fitTitle: with["fitTitle"]?.boolValue == true)
            if let link = with["link"]?.stringValue, !link.contains("${"),
                let problem = VODPull.problem(withLink: link, fileExtension: with["fileExtension"]?.stringValue)
            {
                problems.append(OptionProblem(at: JSONPath.root.appending("link"), problem))
            }
            return problems
        }
    }

    /// The outputs of `aliyun.vod.pull`.
    public struct Outputs: StageOutputs {
        /// The video's id.
        @Output("The video's id (the job's MediaId).") public var videoId = ""
        /// The pull's job id.
        @Output("The pull's job id (UploadMediaByURL's JobId).") public var jobId = ""
        /// Whether this item version made the video (always true: every pull makes one).
        @Output("Whether this item version made the video (an onCancel that deletes it checks it).")
        public var created = false
        /// The bytes VOD fetched.
        @Output("The bytes VOD fetched.") public var size = 0

        public init() {}
    }

    public static let stageType = "aliyun.vod.pull"
    public static let resource = StageResource.api
    public static let summary =
        "Has ApsaraVideo VOD fetch a file from a URL (UploadMediaByURL) and follows the job (GetURLUploadInfos) until the video exists; never submits twice for one item version."

    public init() {}

    /// What the stage records: the submission's marker before it is sent, then the job it made or adopted.
    struct Checkpoint: Codable, Sendable {
        var intent: CreateIntent?
        var jobId: String?
        /// Jobs that failed before this submission (each later one carries a new SessionId).
        var failures = 0
    }

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        if let problem = VODPull.problem(withLink: options.link, fileExtension: options.fileExtension) {
            throw StageFailure("link: \(problem)", kind: .invalidOptions)
        }
        let pull = try VODPull(options: options, context: context)
        let checkpoint = context.lastCheckpoint(as: Checkpoint.self) ?? Checkpoint()
        let marker = "pipeline-" + (try await context.idempotencyKey("pull-video")) + "-\(checkpoint.failures)"
        if let jobId = checkpoint.jobId {
            context.logger.info("following pull job \(jobId)")
            return try await pull.follow(jobId, failures: checkpoint.failures)
        }
        // A submission with this marker that may have made a job: looked for, and submitted again only while VOD
        // would refuse the repeat.
        let earlier = checkpoint.intent.flatMap { $0.marker == marker && $0.mayHaveActed ? $0 : nil }
        if let earlier {
            if let wait = earlier.lookup(waiting: options.reconcileWait),
                let jobId = try await pull.lookUp(marker: marker, waiting: wait)
            {
                context.logger.notice("adopted pull job \(jobId), submitted by a request that was never answered")
                try await context.checkpoint(Checkpoint(intent: earlier, jobId: jobId, failures: checkpoint.failures))
                return try await pull.follow(jobId, failures: checkpoint.failures)
            }
            // Whether or not it was looked for, a job it may have made is not submitted for again past the window.
            if let problem = VODPull.resubmissionProblem(after: earlier, link: pull.shownLink) { throw problem }
        }
        try pull.checkLinkExpiry()
        let jobId = try await pull.submit(marker: marker, earlier: earlier, failures: checkpoint.failures)
        return try await pull.follow(jobId, failures: checkpoint.failures)
    }
}
