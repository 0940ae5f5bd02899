import AsyncHTTPClient
import Foundation
import HTTPTransport
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
public import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// `aliyun.vod.ticket`: creates an ApsaraVideo VOD video and the upload address and temporary credential of
/// its source (`CreateUploadVideo`), through the RPC API or the user's own app server.
///
/// Run again for the same item version (a retry, a rerun after a crash, or as the `refreshWith` of
/// `oss.upload` when the credential expired) it asks `RefreshUploadVideo` for a new credential of the same
/// video. When the item's content changed since a version that made a video, `onChange: replace` uploads the
/// new file to that video (RefreshUploadVideo: a new upload, the same VideoId). The create carries a
/// `ReferenceId` recorded durably before the request; after a create that was never answered, the video is
/// looked up by it (`GetVideoInfo`) and adopted, never made twice.
public struct AliyunVODTicketStage: Stage {
    /// The options of `aliyun.vod.ticket`.
    public struct Options: StageOptions {
        /// The VOD API and the AccessKey.
        @OptionGroup public var connection: AliyunConnection
        /// The user's app server instead of the API.
        @Option(
            "Your app server instead of the API: a URL template GET → {VideoId, UploadAddress, UploadAuth}; placeholders {title}, {fileName}, {fileSize}, {referenceId} and {videoId} (empty for a create, the video's id for a refresh)."
        )
        public var appServer: String?
        /// The file to upload (default: the input file).
        @Option("The file to upload (default: the input file); its name and size go to CreateUploadVideo.")
        public var file: String?
        /// Title (default: the file's name without extension).
        @Option("Title, at most 128 characters and no emoji (default: the file's name without extension).")
        public var title: String?
        /// Shorten a title beyond VOD's limit instead of failing.
        @Option(
            "Make a title that VOD would refuse fit instead of failing: emoji left out, cut to 128 characters (for titles made from file names)."
        )
        public var fitTitle = false
        /// Description.
        @Option("Description, at most 1,024 characters.") public var description: String?
        /// Cover image URL.
        @Option("Cover image URL.") public var coverURL: String?
        /// Category id.
        @Option("Category id.") public var cateId: Int?
        /// Tags, comma-separated.
        @Option("Tags, comma-separated: at most 16, each at most 32 characters.") public var tags: String?
        /// Transcode template group id.
        @Option("Transcode template group id.") public var templateGroupId: String?
        /// Storage location (bucket) of the source.
        @Option("Storage location of the source (default: the account's).") public var storageLocation: String?
        /// UserData JSON (callbacks and extensions).
        @Option("UserData JSON (callbacks and extensions).") public var userData: String?
        /// After a create that was never answered, how long to look for its video before creating again.
        @Option(
            "After a create that was never answered, how long to look for its video (by ReferenceId) before creating again."
        )
        public var reconcileWait = TimeSpan(seconds: 10)
        /// When the item's content changed: a new upload for the earlier video, or a new video.
        @Option(
            "When the item's content changed since a version that made a video: replace (a new upload of that video's source) or new (a second video)."
        )
        public var onChange = VimeoTicketStage.ChangePolicy.replace

        public init() {}

        /// VOD's documented limits on the texts known before a run (``VODLimits``); a title from a template or the
        /// file's name is checked before the request.
        public static func problems(in with: JSONValue) -> [OptionProblem] {
            VODLimits.problems(in: with, fitTitle: with["fitTitle"]?.boolValue == true)
        }
    }

    /// The outputs of `aliyun.vod.ticket`.
    public struct Outputs: StageOutputs {
        /// The video's id.
        @Output("The video's id.") public var videoId = ""
        /// Where the source goes, and the credential to send it with.
        @OutputGroup public var address = VODUploadAddress()
        /// The ReferenceId the create carried (empty when the video was made by an earlier version).
        @Output("The ReferenceId the create carried.") public var referenceId = ""
        /// Whether this item version made the video (false when it uploads a new source of an earlier one).
        @Output("Whether this item version made the video (an onCancel that deletes it checks it).")
        public var created = false

        public init() {}
    }

    public static let stageType = "aliyun.vod.ticket"
    public static let inputFileOption = "file"
    public static let resource = StageResource.api
    public static let summary =
        "Creates an ApsaraVideo VOD video and its OSS upload address and temporary credential (CreateUploadVideo), or refreshes them (RefreshUploadVideo); reconciles an unanswered create by ReferenceId."

    public init() {}

    /// What the stage records: the create's intent, then the video it made or adopted.
    struct Checkpoint: Codable, Sendable {
        var intent: CreateIntent?
        var videoId: String?
        var created = true
    }

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let path = options.file ?? context.item.path
        let ticket = try VODTicketRequest(options: options, context: context, path: path)
        let reference = "pipeline-" + (try await context.idempotencyKey("create-video"))
        let checkpoint = context.lastCheckpoint(as: Checkpoint.self)
        if let checkpoint, let videoId = checkpoint.videoId {
            context.logger.info("asking for a new upload credential of video \(videoId)")
            return try await ticket.refresh(videoId, reference: reference, created: checkpoint.created)
        }
        if options.onChange == .replace, let previous = context.previousOutputs?["videoId"]?.stringValue,
            !previous.isEmpty
        {
            do {
                let outputs = try await ticket.refresh(previous, reference: "", created: false)
                try await context.checkpoint(Checkpoint(videoId: previous, created: false))
                context.logger.info("uploading a new source for video \(previous) (RefreshUploadVideo)")
                return outputs
            } catch let failure as HTTPFailure where failure.code == .notFound {
                context.logger.warning("the previous version's video \(previous) no longer exists: creating a new one")
            }
        }
        return try await ticket.create(reference: reference, intent: checkpoint?.intent)
    }
}

/// One run of `aliyun.vod.ticket`.
private struct VODTicketRequest {
    let options: AliyunVODTicketStage.Options
    let context: StageContext
    let fileName: String
    let fileSize: Int64
    let title: String

    init(options: AliyunVODTicketStage.Options, context: StageContext, path: String) throws {
        self.options = options
        self.context = context
        fileName = URL(fileURLWithPath: path).lastPathComponent
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw PlatformError(.invalidInput, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        fileSize = Int64(info.st_size)
        if options.appServer == nil, let problem = VODLimits.problem(withFileName: fileName) {
            throw PlatformError(.invalidInput, problem)
        }
        let title = options.title ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        self.title = try VODLimits.title(title, fit: options.fitTitle)
    }

    var api: AliyunVODAPI {
        get throws {
            try options.connection.connect(context: context)
        }
    }

    /// `RefreshUploadVideo` (or the app server with `{videoId}`).
    func refresh(_ videoId: String, reference: String, created: Bool) async throws -> AliyunVODTicketStage.Outputs {
        let action = "refreshing the upload credential of video \(videoId) (RefreshUploadVideo)"
        let answer =
            if options.appServer != nil {
                try await appServer(videoId: videoId, reference: reference, doing: action)
            } else {
                try await api.call("RefreshUploadVideo", ["VideoId": videoId], doing: action)
            }
        return try outputs(answer, videoId: videoId, reference: reference, created: created, doing: action)
    }

    /// `CreateUploadVideo` with the ReferenceId, or the video an unanswered earlier create made.
    func create(reference: String, intent: CreateIntent?) async throws -> AliyunVODTicketStage.Outputs {
        if options.appServer == nil, let intent, intent.marker == reference,
            let wait = intent.lookup(waiting: options.reconcileWait)
        {
            let api = try self.api
            let found = try await lookUp(
                waiting: wait, for: "a video with ReferenceId \(reference)", logger: context.logger
            ) {
                do {
                    let info = try await api.call(
                        "GetVideoInfo", ["ReferenceId": reference],
                        doing: "looking for the video of an unanswered create")
                    return info.at("Video").map { [$0] } ?? []
                } catch let failure as HTTPFailure where failure.code == .notFound {
                    return []
                }
            }
            if let videoId = found.first?.at("VideoId")?.stringValue {
                context.logger.notice("adopted video \(videoId), created by a create that was never answered")
                try await context.checkpoint(AliyunVODTicketStage.Checkpoint(intent: intent, videoId: videoId))
                return try await refresh(videoId, reference: reference, created: true)
            }
        }
        var parameters = ["Title": title, "FileName": fileName, "FileSize": String(fileSize), "ReferenceId": reference]
        parameters["Description"] = options.description
        parameters["CoverURL"] = options.coverURL
        parameters["CateId"] = options.cateId.map(String.init)
        parameters["Tags"] = options.tags.map(VODLimits.normalized(tags:))
        parameters["TemplateGroupId"] = options.templateGroupId
        parameters["StorageLocation"] = options.storageLocation
        parameters["UserData"] = options.userData
        let action = "creating the video (CreateUploadVideo)"
        try await context.checkpoint(AliyunVODTicketStage.Checkpoint(intent: CreateIntent(marker: reference)))
        let answer: JSONValue
        do {
            answer =
                if options.appServer != nil {
                    try await appServer(videoId: "", reference: reference, doing: action)
                } else {
                    try await api.call("CreateUploadVideo", parameters, doing: action)
                }
        } catch {
            if let intent = CreateIntent(marker: reference, after: error) {
                try await context.checkpoint(AliyunVODTicketStage.Checkpoint(intent: intent))
            }
            throw error
        }
        let videoId = try answer.requiredString("VideoId", in: action)
        try await context.checkpoint(
            AliyunVODTicketStage.Checkpoint(intent: CreateIntent(marker: reference), videoId: videoId))
        context.logger.info("created video \(videoId)")
        return try outputs(answer, videoId: videoId, reference: reference, created: true, doing: action)
    }

    /// GET of the app server's URL, its placeholders filled in.
    private func appServer(videoId: String, reference: String, doing action: String) async throws -> JSONValue {
        var url = options.appServer ?? ""
        for (name, value) in [
            ("title", title), ("fileName", fileName), ("fileSize", String(fileSize)), ("referenceId", reference),
            ("videoId", videoId),
        ] {
            url = url.replacingOccurrences(of: "{\(name)}", with: AliyunVODAPI.percentEncode(value))
        }
        let exchange = HTTPExchange(
            client: context.httpClient, stallTimeout: TimeSpan(seconds: 60), answerTimeout: TimeSpan(seconds: 60))
        let answer = try await exchange.send(
            HTTPClientRequest(url: url, method: .GET, headers: [("Accept", "application/json")]), doing: action)
        guard answer.status == .ok else { throw HTTPFailure.platform(answer, doing: action) }
        return try VimeoAPI.object(in: answer, doing: action)
    }

    private func outputs(
        _ answer: JSONValue, videoId: String, reference: String, created: Bool, doing action: String
    ) throws -> AliyunVODTicketStage.Outputs {
        let ticket = try VODUploadTicket(answer, doing: action)
        return AliyunVODTicketStage.Outputs.with {
            $0.videoId = answer["VideoId"]?.stringValue ?? videoId
            $0.address = ticket.address
            $0.referenceId = reference
            $0.created = created
        }
    }
}
