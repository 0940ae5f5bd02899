import Foundation
import HTTPTransport
import Logging
public import StageKit

/// `aliyun.vod.metadata`: sets a video's title, description, tags, cover and category (`UpdateVideoInfo`).
public struct AliyunVODMetadataStage: Stage {
    /// The options of `aliyun.vod.metadata`.
    public struct Options: StageOptions {
        /// The VOD API and the AccessKey.
        @OptionGroup public var connection: AliyunConnection
        /// The video.
        @Option("The video's id, e.g. ${ticket.videoId}.") public var videoId: String
        /// New title.
        @Option("New title, at most 128 characters and no emoji.") public var title: String?
        /// Shorten a title beyond VOD's limit instead of failing.
        @Option("Make a title that VOD would refuse fit instead of failing: emoji left out, cut to 128 characters.")
        public var fitTitle = false
        /// New description.
        @Option("New description, at most 1,024 characters.") public var description: String?
        /// New tags, comma-separated.
        @Option("New tags, comma-separated: at most 16, each at most 32 characters.") public var tags: String?
        /// New cover image URL.
        @Option("New cover image URL, e.g. ${cover.imageURL}.") public var coverURL: String?
        /// New category id.
        @Option("New category id.") public var cateId: Int?

        public init() {}

        /// VOD's documented limits on the texts (``VODLimits``), also once templates are resolved.
        public static func problems(in with: JSONValue) -> [OptionProblem] {
            VODLimits.problems(in: with, fitTitle: with["fitTitle"]?.boolValue == true)
        }
    }

    /// The outputs of `aliyun.vod.metadata`.
    public struct Outputs: StageOutputs {
        /// The video's id.
        @Output("The video's id.") public var videoId = ""

        public init() {}
    }

    public static let stageType = "aliyun.vod.metadata"
    public static let resource = StageResource.api
    public static let summary =
        "Sets an ApsaraVideo VOD video's title, description, tags, cover and category (UpdateVideoInfo)."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let api = try options.connection.connect(context: context)
        var parameters = ["VideoId": options.videoId]
        parameters["Title"] = try options.fitTitle ? options.title.map(VODLimits.fitted(title:)) : options.title
        parameters["Description"] = options.description
        parameters["Tags"] = options.tags.map(VODLimits.normalized(tags:))
        parameters["CoverURL"] = options.coverURL
        parameters["CateId"] = options.cateId.map(String.init)
        _ = try await api.call(
            "UpdateVideoInfo", parameters, doing: "updating video \(options.videoId) (UpdateVideoInfo)")
        return Outputs.with {
            $0.videoId = options.videoId
        }
    }
}

/// `aliyun.vod.wait`: polls `GetVideoInfo` until the video's status is the one asked for (`Normal`, by
/// default: transcoded and playable). The statuses are those of VOD's "basic data types" reference: a failed one
/// (`UploadFail`, `TranscodeFail`, `ProduceFail`) or `Blocked` fails; `Checking` (audit before publish: the video
/// stays in review until someone approves it in the console) ends a wait for `Normal` with that status and a
/// warning, since no amount of waiting makes it playable.
public struct AliyunVODWaitStage: Stage {
    /// The options of `aliyun.vod.wait`.
    public struct Options: StageOptions {
        /// The VOD API and the AccessKey.
        @OptionGroup public var connection: AliyunConnection
        /// The video.
        @Option("The video's id, e.g. ${ticket.videoId}.") public var videoId: String
        /// The status to wait for.
        @Option("The status to wait for: Normal (transcoded, playable) or UploadSucc (the source arrived).")
        public var until = Target.normal
        /// The longest wait.
        @Option("The longest wait (0: check once).", minimum: 0) public var timeout = TimeSpan(seconds: 1800)
        /// Time between checks.
        @Option("Time between checks.", minimum: 0) public var interval = TimeSpan(seconds: 5)
        /// How long the video may stay Uploading before the wait fails, retryably.
        @Option(
            "How long the video may stay Uploading (VOD has not received its source) before the wait fails (retryably: a later attempt waits for the same video), rather than waiting out timeout for a file that may not be coming.",
            minimum: 0)
        public var uploadingTimeout = TimeSpan(seconds: 300)

        public init() {}
    }

    /// The status `aliyun.vod.wait` waits for.
    public enum Target: String, OptionChoice {
        /// Transcoded and playable.
        case normal = "Normal"
        /// The source arrived (transcoding may still run).
        case uploadSucc = "UploadSucc"
    }

    /// The outputs of `aliyun.vod.wait`.
    public struct Outputs: StageOutputs {
        /// The video's id.
        @Output("The video's id.") public var videoId = ""
        /// The status reached.
        @Output("The status reached.") public var status = ""
        /// The source's size in bytes.
        @Output("The source's size in bytes.") public var size = 0

        public init() {}
    }

    public static let stageType = "aliyun.vod.wait"
    public static let resource = StageResource.api
    public static let summary =
        "Waits until an ApsaraVideo VOD video's status (GetVideoInfo) is Normal (or UploadSucc); a failed or Blocked status fails, Checking (in review) ends the wait with a warning."

    /// The statuses that end the wait with a failure, and the kind of each.
    static let failed: [String: ErrorKind] = [
        "UploadFail": .invalidInput, "TranscodeFail": .invalidInput, "ProduceFail": .serverFailure,
        "Blocked": .forbidden,
    ]
    /// The statuses after the source arrived, in order.
    static let afterUpload = ["UploadSucc", "Transcoding", "Checking", "Normal"]

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let api = try options.connection.connect(context: context)
        var outputs = Outputs.with {
            $0.videoId = options.videoId
        }
        let goal = options.until.rawValue
        let started = ContinuousClock.now
        try await poll(every: options.interval, for: options.timeout, what: "status \(goal)") {
            let info = try await api.call(
                "GetVideoInfo", ["VideoId": options.videoId], doing: "checking video \(options.videoId) (GetVideoInfo)")
            let status = info.at("Video.Status")?.stringValue ?? ""
            outputs.status = status
            outputs.size = info.at("Video.Size")?.intValue ?? 0
            if status == "Uploading", ContinuousClock.now - started >= options.uploadingTimeout.duration {
                throw StageFailure.retryable(
                    "video \(options.videoId) is still Uploading after \(options.uploadingTimeout): VOD has not received its source file (a large file or a VOD backlog may only be slow; an upload that reported done may not have completed). A later attempt waits for this same video again; if its source never arrives, `pipeline cancel` deletes the video before `pipeline run --reprocess` uploads anew, so no empty video is left behind",
                    kind: .notFound)
            }
            if let kind = Self.failed[status] {
                let reason = status == "Blocked" ? "it is blocked" : "its status is \(status)"
                throw StageFailure("video \(options.videoId) cannot be published: \(reason)", kind: kind)
            }
            if goal == "Normal", status == "Checking" {
                context.logger.warning(
                    "video \(options.videoId) is in review (Checking: audit before publish is on); it becomes Normal once approved in the VOD console"
                )
                return true
            }
            guard let reached = Self.afterUpload.firstIndex(of: status),
                let wanted = Self.afterUpload.firstIndex(of: goal)
            else { return false }
            return reached >= wanted && (goal != "Normal" || status == "Normal")
        }
        return outputs
    }
}

/// `aliyun.vod.image`: the upload address and temporary credential of an image (`CreateUploadImage`, a cover
/// by default); `oss.upload` sends the file, and `aliyun.vod.metadata` makes its `imageURL` the cover.
public struct AliyunVODImageStage: Stage {
    /// The options of `aliyun.vod.image`.
    public struct Options: StageOptions {
        /// The VOD API and the AccessKey.
        @OptionGroup public var connection: AliyunConnection
        /// The image file; its extension is the ImageExt.
        @Option("The image file (png, jpg, jpeg or gif); its extension is the ImageExt.") public var file: String
        /// cover or default.
        @Option("ImageType: cover or default.") public var imageType = "cover"
        /// Title.
        @Option("Title, at most 128 characters and no emoji.") public var title: String?

        public init() {}

        /// VOD's documented limits on the title (``VODLimits``).
        public static func problems(in with: JSONValue) -> [OptionProblem] {
            VODLimits.problems(in: with, fitTitle: false)
        }
    }

    /// The outputs of `aliyun.vod.image`.
    public struct Outputs: StageOutputs {
        /// The image's id.
        @Output("The image's id.") public var imageId = ""
        /// The image's URL (the cover URL for aliyun.vod.metadata).
        @Output("The image's URL.") public var imageURL = ""
        /// Where the image goes, and the credential to send it with.
        @OutputGroup public var address = VODUploadAddress()

        public init() {}
    }

    public static let stageType = "aliyun.vod.image"
    public static let resource = StageResource.api
    public static let summary =
        "Gets the OSS upload address and temporary credential of an ApsaraVideo VOD image, a cover by default (CreateUploadImage)."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let api = try options.connection.connect(context: context)
        let imageExtension = URL(fileURLWithPath: options.file).pathExtension.lowercased()
        guard ["png", "jpg", "jpeg", "gif"].contains(imageExtension) else {
            throw PlatformError(.invalidInput, "\(options.file) is not a png, jpg, jpeg or gif file")
        }
        var parameters = ["ImageType": options.imageType, "ImageExt": imageExtension]
        parameters["Title"] = options.title
        let action = "creating the image (CreateUploadImage)"
        let answer = try await api.call("CreateUploadImage", parameters, doing: action)
        return try Outputs.with {
            $0.imageId = try answer.requiredString("ImageId", in: action)
            $0.imageURL = try answer.requiredString("ImageURL", in: action)
            $0.address = try VODUploadTicket(answer, doing: action).address
        }
    }
}

/// `aliyun.vod.delete`: deletes videos (`DeleteVideo`), for a workflow's `onCancel`; a video that no longer
/// exists is not a failure.
public struct AliyunVODDeleteStage: Stage {
    /// The options of `aliyun.vod.delete`.
    public struct Options: StageOptions {
        /// The VOD API and the AccessKey.
        @OptionGroup public var connection: AliyunConnection
        /// The video.
        @Option("The video's id, e.g. ${ticket.videoId}.") public var videoId: String

        public init() {}
    }

    /// The outputs of `aliyun.vod.delete`.
    public struct Outputs: StageOutputs {
        /// The video's id.
        @Output("The video's id.") public var videoId = ""
        /// Whether it existed until now.
        @Output("Whether it existed until now.") public var deleted = false

        public init() {}
    }

    public static let stageType = "aliyun.vod.delete"
    public static let resource = StageResource.api
    public static let summary = "Deletes an ApsaraVideo VOD video and its source (DeleteVideo), e.g. in onCancel."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let api = try options.connection.connect(context: context)
        let missing: [String]
        do {
            let answer = try await api.call(
                "DeleteVideo", ["VideoIds": options.videoId], doing: "deleting video \(options.videoId) (DeleteVideo)")
            missing = answer["NonExistVideoIds"]?.arrayValue?.compactMap(\.stringValue) ?? []
        } catch let failure as HTTPFailure where failure.code == .notFound {
            // DeleteVideo's reference: when none of the videos named exists, the answer is a 404
            // (InvalidVideo.NotFound); when only some do not, a 200 names them in NonExistVideoIds.
            missing = [options.videoId]
        }
        return Outputs.with {
            $0.videoId = options.videoId
            $0.deleted = !missing.contains(options.videoId)
        }
    }
}
