import Foundation
import HTTPTransport
import Logging
import NIOHTTP1
public import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// `vimeo.ticket`: creates the video and its upload (`POST /me/videos`), after checking the account's free
/// quota, or, when the item's content changed since a version that made a video, a new version of that
/// video's file (`POST {uri}/versions`, `onChange: replace`).
///
/// Before a create, a marker is recorded durably, and the new video carries it in its description; a rerun
/// after a crash between the request and its answer finds that video through the documented listing and
/// adopts it (``VideoReconciler``) instead of making a second one, since Vimeo takes no idempotency key. The
/// requests also carry an `Idempotency-Key`, for platforms that honour one.
public struct VimeoTicketStage: Stage {
    /// The options of `vimeo.ticket`.
    public struct Options: StageOptions {
        /// The API and the token.
        @OptionGroup public var connection: VimeoConnection
        /// How the file reaches the platform.
        @Option("tus (resumable, to upload.upload_link), pull (the platform fetches link) or the legacy streaming PUT.")
        public var approach = Approach.tus
        /// pull: the URL the platform fetches the file from.
        @Option("pull: the URL the platform fetches the file from, e.g. ${store.sharedURL}.") public var link: String?
        /// Bytes to upload (default: the size of file).
        @Option("Bytes to upload (default: the size of file).") public var size: ByteCount?
        /// The file to upload (default: the input file); its size is the ticket's size.
        @Option("The file to upload (default: the input file); its size is the ticket's size.")
        public var file: String?
        /// The video's title.
        @Option("The video's title (not with streaming: a legacy ticket carries none).") public var name: String?
        /// The video's description.
        @Option("The video's description (not with streaming).") public var description: String?
        /// privacy.view: anybody, unlisted, nobody, …
        @Option("privacy.view: anybody, unlisted, nobody, … (not with streaming)") public var privacy: String?
        /// Check the free upload quota first (GET /me?fields=upload_quota).
        @Option("Check the free upload quota first (GET /me?fields=upload_quota).") public var preflight = true
        /// After a create that was never answered, how long to look for its video before creating again.
        @Option(
            "After a create that was never answered, how long to look for its video before creating again (listings lag behind creation)."
        )
        public var reconcileWait = TimeSpan(seconds: 10)
        /// When the item's content changed: a new version of the earlier video's file, or a new video.
        @Option(
            "When the item's content changed since a version that made a video: replace (a new version of that video's file, tus or pull) or new (a second video)."
        )
        public var onChange = ChangePolicy.replace

        public init() {}
    }

    /// How the file reaches the platform.
    public enum Approach: String, OptionChoice {
        /// tus: resumable, to upload.upload_link.
        case tus
        /// The platform fetches the file from `link` itself.
        case pull
        /// The legacy streaming PUT to upload_link_secure, finished by DELETE complete_uri.
        case streaming
    }

    /// What a changed item does to the video its previous version made.
    public enum ChangePolicy: String, OptionChoice {
        /// Upload a new version of that video's file.
        case replace
        /// Create another video.
        case new
    }

    /// The outputs of `vimeo.ticket`.
    public struct Outputs: StageOutputs {
        /// The video's URI, e.g. /videos/123; a legacy ticket's URI with streaming.
        @Output(
            "The video's URI, e.g. /videos/123; with streaming, the ticket's (the video's comes from vimeo.activate).")
        public var uri = ""
        /// The video's id.
        @Output("The video's id (the ticket's with streaming).") public var id = ""
        /// The video's page.
        @Output("The video's page.") public var link = ""
        /// Where to upload (tus: upload.upload_link; streaming: upload_link_secure; pull: empty).
        @Output("Where to upload (tus: upload.upload_link; streaming: upload_link_secure; pull: empty).")
        public var uploadLink = ""
        /// streaming: the URI to DELETE when the upload is done; otherwise empty.
        @Output("streaming: the URI to DELETE when the upload is done; otherwise empty.") public var completeUri = ""
        /// tus, pull or streaming.
        @Output("tus, pull or streaming.") public var approach = ""
        /// Bytes the ticket expects (0 for a pull of a file of unknown size).
        @Output("Bytes the ticket expects (0 for a pull of a file of unknown size).") public var size: Int64 = 0
        /// The new version's URI when the upload replaces the file of an existing video; empty otherwise.
        @Output("The new version's URI when the upload replaces an existing video's file; empty otherwise.")
        public var version = ""
        /// Whether this run made the video (or the ticket): false when it replaced an existing video's file.
        /// An `onCancel` that deletes the video checks it, so cancelling a new version leaves the video.
        @Output(
            "Whether this run made the video (or ticket): false when it replaced an existing video's file (an onCancel that deletes the video checks it)."
        )
        public var created = false

        public init() {}
    }

    public static let stageType = "vimeo.ticket"
    public static let inputFileOption = "file"
    public static let landingOutput = "link"
    public static let resource = StageResource.api
    public static let summary =
        "Creates the video and its upload (POST /me/videos: tus, pull or legacy streaming) after a quota check, or a new version of the video's file when the content changed."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let request = try TicketRequest(options: options, context: context)
        if options.onChange == .replace, let previous = context.previousOutputs,
            let video = previous["uri"]?.stringValue, video.hasPrefix("/videos/")
        {
            if options.approach == .streaming {
                context.logger.warning(
                    "the legacy streaming approach cannot replace the file of \(video): creating a new video (tus and pull can)"
                )
            } else if let replaced = try await request.replaceFile(
                of: video, link: previous["link"]?.stringValue ?? "")
            {
                return replaced
            }
        }
        if options.preflight, let size = request.size { try await request.checkQuota(for: size) }
        return options.approach == .streaming ? try await request.legacyTicket() : try await request.createVideo()
    }
}

/// One run of `vimeo.ticket`: its options resolved against the item, and the three ways it can end.
private struct TicketRequest {
    let options: VimeoTicketStage.Options
    let context: StageContext
    let api: VimeoAPI
    /// The file's size; nil for a pull whose file is not here.
    let size: Int64?
    /// The name the platform gives the file.
    let fileName: String

    init(options: VimeoTicketStage.Options, context: StageContext) throws {
        self.options = options
        self.context = context
        api = try options.connection.connect(context: context)
        let path = options.file ?? context.item.path
        if options.approach == .pull {
            guard let link = options.link, let url = URL(string: link), url.host != nil else {
                throw PlatformError(
                    .invalidRequest, "approach pull needs link, the URL the platform fetches the file from")
            }
            // The file at link is often not the input (an export): its size is known only when given.
            size = try options.size?.bytes ?? options.file.map(Self.fileSize)
            fileName = options.file.map { URL(fileURLWithPath: $0).lastPathComponent } ?? url.lastPathComponent
        } else {
            size = try options.size?.bytes ?? Self.fileSize(path)
            fileName = URL(fileURLWithPath: path).lastPathComponent
        }
    }

    /// Fails when the account has less free space than the file needs.
    func checkQuota(for size: Int64) async throws {
        let me = try await api.object(.GET, "/me?fields=upload_quota", doing: "checking the upload quota")
        if let free = me.at("upload_quota.space.free")?.intValue, Int64(free) < size {
            throw PlatformError(
                .quotaExceeded, "the video needs \(ByteCount(size)) but the account has \(ByteCount(Int64(free))) free")
        }
    }

    /// The `upload` object of a create or a new version.
    var upload: JSONValue {
        var upload: [String: JSONValue] = ["approach": .string(options.approach.rawValue)]
        if let size { upload["size"] = .int(Int(size)) }
        if options.approach == .pull, let link = options.link { upload["link"] = .string(link) }
        return .object(upload)
    }

    /// `POST /me/videos` (tus or pull), or the video an unanswered earlier create made.
    func createVideo() async throws -> VimeoTicketStage.Outputs {
        let key = try await context.idempotencyKey("create-video")
        let marker = "pipeline-\(key)"
        let action = "creating the video (POST /me/videos)"
        let video: JSONValue
        if let intent = context.lastCheckpoint(as: CreateIntent.self), intent.marker == marker,
            let wait = intent.lookup(waiting: options.reconcileWait),
            let adopted = try await VideoReconciler(api: api, marker: marker, logger: context.logger).adopt(
                waiting: wait)
        {
            video = adopted
        } else {
            var body: [String: JSONValue] = [
                "upload": upload,
                "description": .string(VideoReconciler.description(options.description, marker: marker)),
            ]
            if let name = options.name { body["name"] = .string(name) }
            if let privacy = options.privacy { body["privacy"] = ["view": .string(privacy)] }
            try await context.checkpoint(CreateIntent(marker: marker))
            do {
                video = try await api.object(
                    .POST, "/me/videos", json: .object(body), headers: [("Idempotency-Key", key)],
                    expected: [200, 201], doing: action)
            } catch {
                if let intent = CreateIntent(marker: marker, after: error) { try await context.checkpoint(intent) }
                throw error
            }
        }
        let uri = try video.requiredString("uri", in: action)
        let uploadLink = options.approach == .tus ? try video.requiredString("upload.upload_link", in: action) : ""
        context.logger.info("created video \(uri)")
        return outputs(uri: uri, link: video.at("link")?.stringValue ?? "", uploadLink: uploadLink)
    }

    /// `POST {video}/versions`: a new version of the video's file, uploaded as a new video would be. Nil when
    /// the video no longer exists (deleted on the platform): then a new one is made.
    func replaceFile(of video: String, link: String) async throws -> VimeoTicketStage.Outputs? {
        let key = try await context.idempotencyKey("replace-file")
        let action = "replacing the file of \(video) (POST \(video)/versions)"
        let answer = try await api.call(
            .POST, "\(video)/versions", json: ["file_name": .string(fileName), "upload": upload],
            headers: [("Idempotency-Key", key)], expected: [200, 201, 404], doing: action)
        if answer.status == .notFound {
            context.logger.warning("the previous version's video \(video) no longer exists: creating a new video")
            return nil
        }
        let version = try VimeoAPI.object(in: answer, doing: action)
        let uploadLink = options.approach == .tus ? try version.requiredString("upload.upload_link", in: action) : ""
        let uri = version.at("uri")?.stringValue ?? ""
        context.logger.info("uploading a new version of \(video)'s file (\(uri.isEmpty ? "no version URI" : uri))")
        if options.name != nil || options.description != nil || options.privacy != nil {
            context.logger.notice(
                "a new version keeps the video's name, description and privacy: vimeo.metadata changes them")
        }
        var outputs = outputs(uri: video, link: link, uploadLink: uploadLink)
        outputs.version = uri
        outputs.created = false
        return outputs
    }

    /// Legacy streaming: `POST /me/videos` with `type: streaming` (API 3.2/3.3) answers a ticket, not a video;
    /// `vimeo.activate` makes the video. A lost answer leaves at most an unused ticket, which expires, so
    /// there is nothing to reconcile.
    func legacyTicket() async throws -> VimeoTicketStage.Outputs {
        let key = try await context.idempotencyKey("create-ticket")
        let action = "creating an upload ticket (POST /me/videos, type streaming)"
        let answer = try await api.object(
            .POST, "/me/videos", json: ["type": "streaming"], headers: [("Idempotency-Key", key)],
            expected: [200, 201], version: "3.2", doing: action)
        let ticket = try StreamingTicket(answer, doing: action)
        if options.name != nil || options.description != nil || options.privacy != nil {
            context.logger.notice(
                "a streaming ticket carries no name, description or privacy: set them with vimeo.metadata on ${activate.uri}"
            )
        }
        context.logger.info("created upload ticket \(ticket.uri)")
        var outputs = outputs(
            uri: ticket.uri, link: answer.at("link")?.stringValue ?? "", uploadLink: ticket.uploadLink)
        outputs.id = ticket.id
        outputs.completeUri = ticket.completeURI
        return outputs
    }

    private func outputs(uri: String, link: String, uploadLink: String) -> VimeoTicketStage.Outputs {
        VimeoTicketStage.Outputs.with {
            $0.uri = uri
            $0.id = String(uri.split(separator: "/").last ?? "")
            $0.link = link
            $0.uploadLink = uploadLink
            $0.completeUri = ""
            $0.approach = options.approach.rawValue
            $0.size = size ?? 0
            $0.version = ""
            $0.created = true
        }
    }

    static func fileSize(_ path: String) throws -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw PlatformError(.invalidInput, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        return Int64(info.st_size)
    }
}

/// A streaming upload ticket in either shape: the legacy one (API 3.2/3.3: `uri` `/users/…/tickets/…`,
/// `ticket_id`, `upload_link(_secure)` and `complete_uri` at the top level) or a 3.4 video whose `upload`
/// object has them.
struct StreamingTicket {
    var uri: String
    var id: String
    var uploadLink: String
    var completeURI: String

    init(_ answer: JSONValue, doing action: String) throws {
        let legacy = answer.at("complete_uri") != nil
        let prefix = legacy ? "" : "upload."
        uri = try answer.requiredString("uri", in: action)
        id = (legacy ? answer.at("ticket_id")?.stringValue : nil) ?? String(uri.split(separator: "/").last ?? "")
        uploadLink =
            try (answer.at(prefix + "upload_link_secure") ?? answer.required(prefix + "upload_link", in: action))
            .stringValue ?? ""
        completeURI = try answer.requiredString(prefix + "complete_uri", in: action)
    }
}
