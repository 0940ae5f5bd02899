import Foundation
import Logging
import NIOHTTP1
public import StageKit
import UploadStages

#if canImport(Glibc)
    import Glibc
#endif

/// `vimeo.ticket`: creates the video object and its upload (`POST /me/videos`), after checking the
/// account's free quota. Before the request, a marker is recorded durably, and the new video carries it in
/// its description; a rerun after a crash between the request and its answer finds that video through the
/// documented listing and adopts it (``VideoReconciler``) instead of making a second one, since Vimeo takes
/// no idempotency key. The request also carries an `Idempotency-Key`, for platforms that honour one.
public struct VimeoTicketStage: Stage {
    /// The options of `vimeo.ticket`.
    public struct Options: StageOptions {
        /// The API's base URL (the Sandbox's for local runs).
        @Option(VimeoConnection.apiSummary) public var api = VimeoConnection.defaultAPI
        /// Bearer token; use ${env.…} so it stays secret.
        @Option(VimeoConnection.tokenSummary) public var token: String
        /// tus (resumable, upload.upload_link) or the legacy streaming PUT.
        @Option("tus (resumable, upload.upload_link) or the legacy streaming PUT.") public var approach = Approach.tus
        /// Bytes to upload (default: the size of file).
        @Option("Bytes to upload (default: the size of file).") public var size: ByteCount?
        /// The file to upload (default: the input file); its size is the ticket's size.
        @Option("The file to upload (default: the input file); its size is the ticket's size.")
        public var file: String?
        /// The video's title.
        @Option("The video's title.") public var name: String?
        /// The video's description.
        @Option("The video's description.") public var description: String?
        /// privacy.view: anybody, unlisted, nobody, …
        @Option("privacy.view: anybody, unlisted, nobody, …") public var privacy: String?
        /// Check the free upload quota first (GET /me?fields=upload_quota).
        @Option("Check the free upload quota first (GET /me?fields=upload_quota).") public var preflight = true
        /// After a create that was never answered, how long to look for its video before creating again.
        @Option(
            "After a create that was never answered, how long to look for its video before creating again (listings lag behind creation)."
        )
        public var reconcileWait = TimeSpan(seconds: 10)

        public init() {}
    }

    /// How the file is uploaded.
    public enum Approach: String, OptionChoice {
        /// tus: resumable, to upload.upload_link.
        case tus
        /// The legacy streaming PUT to upload_link_secure, finished by DELETE complete_uri.
        case streaming
    }

    /// The outputs of `vimeo.ticket`.
    public struct Outputs: Codable, Sendable {
        /// The video's URI, e.g. /videos/123.
        public var uri: String
        /// The video's id.
        public var id: String
        /// The video's page.
        public var link: String
        /// Where to upload (tus: upload.upload_link; streaming: upload_link_secure).
        public var uploadLink: String
        /// streaming: the URI to DELETE when the upload is done; tus: empty.
        public var completeUri: String
        /// tus or streaming.
        public var approach: String
        /// Bytes the ticket expects.
        public var size: Int64
    }

    public static let stageType = "vimeo.ticket"
    public static let resource = StageResource.api
    public static let summary =
        "Creates the video and its upload ticket (POST /me/videos, tus or legacy streaming), after a quota check."
    public static let outputSchema = OutputSchema([
        OutputField("uri", "The video's URI, e.g. /videos/123."),
        OutputField("id", "The video's id."),
        OutputField("link", "The video's page."),
        OutputField("uploadLink", "Where to upload (tus: upload.upload_link; streaming: upload_link_secure)."),
        OutputField("completeUri", "streaming: the URI to DELETE when the upload is done; tus: empty."),
        OutputField("approach", "tus or streaming."),
        OutputField("size", "Bytes the ticket expects."),
    ])

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let api = try VimeoAPI(base: options.api, token: options.token)
        let approach = options.approach
        let size = try options.size?.bytes ?? Self.fileSize(options.file ?? context.item.path)
        if options.preflight {
            let me = try await api.object(.GET, "/me?fields=upload_quota", doing: "checking the upload quota")
            if let free = me.at("upload_quota.space.free")?.intValue, Int64(free) < size {
                throw PlatformError(
                    .quotaExceeded,
                    "the video needs \(ByteCount(size)) but the account has \(ByteCount(Int64(free))) free")
            }
        }
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
                "upload": ["approach": .string(approach.rawValue), "size": .int(Int(size))],
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
        let uploadLink =
            approach == .streaming
            ? try (video.at("upload.upload_link_secure") ?? video.required("upload.upload_link", in: action))
                .stringValue ?? ""
            : try video.requiredString("upload.upload_link", in: action)
        let completeUri = approach == .streaming ? try video.requiredString("upload.complete_uri", in: action) : ""
        context.logger.info("created video \(uri)")
        return Outputs(
            uri: uri, id: String(uri.split(separator: "/").last ?? ""), link: video.at("link")?.stringValue ?? "",
            uploadLink: uploadLink, completeUri: completeUri,
            approach: video.at("upload.approach")?.stringValue ?? approach.rawValue, size: size)
    }

    static func fileSize(_ path: String) throws -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw PlatformError(.invalidInput, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        return Int64(info.st_size)
    }
}

/// `vimeo.activate`: finishes an upload. Legacy streaming: `DELETE complete_uri` (201 with Location);
/// tus: waits until `upload.status` is `complete` (bounded).
public struct VimeoActivateStage: Stage {
    /// The options of `vimeo.activate`.
    public struct Options: StageOptions {
        /// The API's base URL (the Sandbox's for local runs).
        @Option(VimeoConnection.apiSummary) public var api = VimeoConnection.defaultAPI
        /// Bearer token; use ${env.…} so it stays secret.
        @Option(VimeoConnection.tokenSummary) public var token: String
        /// The vimeo.ticket outputs (${ticket}); or give uri, completeUri and approach.
        @Option("The vimeo.ticket outputs (${ticket}); or give uri, completeUri and approach.")
        public var ticket: JSONValue?
        /// The video's URI.
        @Option("The video's URI.") public var uri: String?
        /// streaming: the complete_uri.
        @Option("streaming: the complete_uri.") public var completeUri: String?
        /// tus (resumable, upload.upload_link) or the legacy streaming PUT.
        @Option("How the file was uploaded.") public var approach: VimeoTicketStage.Approach?
        /// How long to wait for upload.status complete.
        @Option("How long to wait for upload.status complete.") public var timeout = TimeSpan(seconds: 60)

        public init() {}
    }

    /// The outputs of `vimeo.activate`.
    public struct Outputs: Codable, Sendable {
        /// The video's URI, e.g. /videos/123.
        public var uri: String
    }

    public static let stageType = "vimeo.activate"
    public static let resource = StageResource.api
    public static let summary =
        "Activates the upload: DELETE complete_uri (streaming) or wait for upload.status complete (tus)."
    public static let outputSchema = OutputSchema([OutputField("uri", "The video's URI.")])

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let api = try VimeoAPI(base: options.api, token: options.token)
        guard let uri = options.uri ?? options.ticket?["uri"]?.stringValue else {
            throw PlatformError(.invalidRequest, "give ticket (the vimeo.ticket outputs) or uri")
        }
        let approach =
            options.approach
            ?? options.ticket?["approach"]?.stringValue.flatMap(VimeoTicketStage.Approach.init(rawValue:)) ?? .tus
        if approach == .streaming {
            let complete = options.completeUri ?? options.ticket?["completeUri"]?.stringValue ?? ""
            guard !complete.isEmpty else {
                throw PlatformError(.invalidRequest, "a streaming upload needs completeUri")
            }
            let action = "activating the upload (DELETE complete_uri)"
            let answer = try await api.call(.DELETE, complete, expected: [201, 200, 204, 404], doing: action)
            if answer.status == .notFound {
                // A run that died after the DELETE: the upload is already complete if the video says so.
                let video = try await api.object(.GET, "\(uri)?fields=upload.status", doing: "checking the upload")
                guard video.at("upload.status")?.stringValue == "complete" else {
                    throw PlatformError.answer(answer, doing: action)
                }
                return Outputs(uri: uri)
            }
            return Outputs(uri: answer.headers.first(name: "Location") ?? uri)
        }
        try await poll(every: TimeSpan(seconds: 0.5), for: options.timeout, what: "upload.status complete") {
            let video = try await api.object(
                .GET, "\(uri)?fields=upload.status", doing: "checking the upload of \(uri)")
            switch video.at("upload.status")?.stringValue {
            case "complete": return true
            case "error": throw PlatformError(.serverFailure, "the platform reports an upload error for \(uri)")
            case nil:
                throw PlatformError(.invalidResponse, "checking the upload of \(uri): the answer has no upload.status")
            default: return false
            }
        }
        return Outputs(uri: uri)
    }
}

/// `vimeo.metadata`: `PATCH {uri}` with name, description, privacy and any further fields; tags through
/// `PUT {uri}/tags`.
public struct VimeoMetadataStage: Stage {
    /// The options of `vimeo.metadata`.
    public struct Options: StageOptions {
        /// The API's base URL (the Sandbox's for local runs).
        @Option(VimeoConnection.apiSummary) public var api = VimeoConnection.defaultAPI
        /// Bearer token; use ${env.…} so it stays secret.
        @Option(VimeoConnection.tokenSummary) public var token: String
        /// The video's URI.
        @Option("The video's URI (${ticket.uri}).") public var uri: String
        /// The video's title.
        @Option("Title.") public var name: String?
        /// The video's description.
        @Option("Description.") public var description: String?
        /// privacy.view: anybody, unlisted, nobody, …
        @Option("privacy.view: anybody, unlisted, nobody, …") public var privacy: String?
        /// Tags (PUT {uri}/tags).
        @Option("Tags (PUT {uri}/tags).") public var tags: [String]?
        /// More JSON fields merged into the PATCH body.
        @Option("More JSON fields merged into the PATCH body.") public var fields: [String: JSONValue] = [:]

        public init() {}
    }

    /// The outputs of `vimeo.metadata`.
    public struct Outputs: Codable, Sendable {
        /// The video's URI, e.g. /videos/123.
        public var uri: String
        /// The video's page.
        public var link: String
        /// Its title as the platform stored it.
        public var name: String
    }

    public static let stageType = "vimeo.metadata"
    public static let resource = StageResource.api
    public static let summary = "Sets the video's metadata (PATCH {uri}: name, description, privacy, more) and tags."
    public static let outputSchema = OutputSchema([
        OutputField("uri", "The video's URI."),
        OutputField("link", "The video's page."),
        OutputField("name", "Its title as the platform stored it."),
    ])

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let api = try VimeoAPI(base: options.api, token: options.token)
        var body = options.fields
        if let name = options.name { body["name"] = .string(name) }
        if let description = options.description { body["description"] = .string(description) }
        if let privacy = options.privacy { body["privacy"] = ["view": .string(privacy)] }
        var video = try await api.object(
            .PATCH, options.uri, json: .object(body), doing: "setting the metadata of \(options.uri)")
        if let tags = options.tags {
            _ = try await api.call(
                .PUT, "\(options.uri)/tags", json: .array(tags.map { ["name": .string($0)] }),
                expected: [200, 201, 204], doing: "setting the tags of \(options.uri)")
            video = try await api.object(.GET, options.uri, doing: "reading \(options.uri)")
        }
        return Outputs(
            uri: options.uri, link: video.at("link")?.stringValue ?? "", name: video.at("name")?.stringValue ?? "")
    }
}

/// `vimeo.wait`: polls `transcode.status` until `complete` (or fails on `error`), bounded.
public struct VimeoWaitStage: Stage {
    /// The options of `vimeo.wait`.
    public struct Options: StageOptions {
        /// The API's base URL (the Sandbox's for local runs).
        @Option(VimeoConnection.apiSummary) public var api = VimeoConnection.defaultAPI
        /// Bearer token; use ${env.…} so it stays secret.
        @Option(VimeoConnection.tokenSummary) public var token: String
        /// The video's URI.
        @Option("The video's URI.") public var uri: String
        /// How long to wait for upload.status complete.
        @Option("The longest wait.") public var timeout = TimeSpan(seconds: 600)
        /// Time between checks.
        @Option("Time between checks.") public var interval = TimeSpan(seconds: 5)

        public init() {}
    }

    /// The outputs of `vimeo.wait`.
    public struct Outputs: Codable, Sendable {
        /// The video's URI, e.g. /videos/123.
        public var uri: String
        /// complete.
        public var status: String
    }

    public static let stageType = "vimeo.wait"
    public static let resource = StageResource.api
    public static let summary =
        "Waits until the platform has transcoded the video (transcode.status complete), bounded."
    public static let outputSchema = OutputSchema([
        OutputField("uri", "The video's URI."),
        OutputField("status", "complete."),
    ])

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let api = try VimeoAPI(base: options.api, token: options.token)
        try await poll(every: options.interval, for: options.timeout, what: "transcode.status complete") {
            let video = try await api.object(
                .GET, "\(options.uri)?fields=transcode.status", doing: "checking \(options.uri)")
            switch video.at("transcode.status")?.stringValue {
            case "complete": return true
            case "error": throw PlatformError(.serverFailure, "the platform could not transcode \(options.uri)")
            default: return false
            }
        }
        return Outputs(uri: options.uri, status: "complete")
    }
}
