import Foundation
import HTTPTransport
import Logging
import NIOHTTP1
public import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// `vimeo.activate`: finishes an upload. Legacy streaming: `DELETE complete_uri` (201 with Location);
/// tus: waits until `upload.status` is `complete` (bounded).
public struct VimeoActivateStage: Stage {
    /// The options of `vimeo.activate`.
    public struct Options: StageOptions {
        /// The API and the token.
        @OptionGroup public var connection: VimeoConnection
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
        @Option("How long to wait for upload.status complete (0: check once).", minimum: 0)
        public var timeout = TimeSpan(seconds: 60)

        public init() {}
    }

    /// The outputs of `vimeo.activate`.
    public struct Outputs: StageOutputs {
        /// The video's URI, e.g. /videos/123.
        @Output("The video's URI.") public var uri = ""

        public init() {}
    }

    public static let stageType = "vimeo.activate"
    public static let resource = StageResource.api
    public static let summary =
        "Activates the upload: DELETE complete_uri (streaming) or wait for upload.status complete (tus)."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let api = try options.connection.connect(context: context)
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
            let location = answer.headers.first(name: "Location")
            if uri.contains("/tickets/") {
                // A legacy ticket is not the video: only the answer's Location names it.
                guard answer.status != .notFound else {
                    throw PlatformError(
                        .notFound,
                        "\(action): the ticket \(uri) is gone (an earlier run completed it and lost the answer, or it expired): its video cannot be found from it"
                    )
                }
                guard let location else {
                    throw PlatformError(.invalidResponse, "\(action): the answer has no Location naming the video")
                }
                return Outputs.with {
                    $0.uri = location
                }
            }
            if answer.status == .notFound {
                // A run that died after the DELETE: the upload is already complete if the video says so.
                let video = try await api.object(.GET, "\(uri)?fields=upload.status", doing: "checking the upload")
                guard video.at("upload.status")?.stringValue == "complete" else {
                    throw HTTPFailure.platform(answer, doing: action)
                }
                return Outputs.with {
                    $0.uri = uri
                }
            }
            return Outputs.with {
                $0.uri = location ?? uri
            }
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
        return Outputs.with {
            $0.uri = uri
        }
    }
}

/// `vimeo.metadata`: `PATCH {uri}` with name, description, privacy and any further fields; tags through
/// `PUT {uri}/tags`.
public struct VimeoMetadataStage: Stage {
    /// The options of `vimeo.metadata`.
    public struct Options: StageOptions {
        /// The API and the token.
        @OptionGroup public var connection: VimeoConnection
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
    public struct Outputs: StageOutputs {
        /// The video's URI, e.g. /videos/123.
        @Output("The video's URI.") public var uri = ""
        /// The video's page.
        @Output("The video's page.") public var link = ""
        /// Its title as the platform stored it.
        @Output("Its title as the platform stored it.") public var name = ""

        public init() {}
    }

    public static let stageType = "vimeo.metadata"
    public static let landingOutput = "link"
    public static let resource = StageResource.api
    public static let summary = "Sets the video's metadata (PATCH {uri}: name, description, privacy, more) and tags."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let api = try options.connection.connect(context: context)
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
        return Outputs.with {
            $0.uri = options.uri
            $0.link = video.at("link")?.stringValue ?? ""
            $0.name = video.at("name")?.stringValue ?? ""
        }
    }
}

/// `vimeo.wait`: polls `transcode.status` until `complete` (or fails on `error`, or on an `upload.status` of
/// `error`: a pull the platform could not fetch), bounded.
public struct VimeoWaitStage: Stage {
    /// The options of `vimeo.wait`.
    public struct Options: StageOptions {
        /// The API and the token.
        @OptionGroup public var connection: VimeoConnection
        /// The video's URI.
        @Option("The video's URI.") public var uri: String
        /// How long to wait for upload.status complete.
        @Option("The longest wait (0: check once).", minimum: 0) public var timeout = TimeSpan(seconds: 600)
        /// Time between checks.
        @Option("Time between checks.", minimum: 0) public var interval = TimeSpan(seconds: 5)

        public init() {}
    }

    /// The outputs of `vimeo.wait`.
    public struct Outputs: StageOutputs {
        /// The video's URI, e.g. /videos/123.
        @Output("The video's URI.") public var uri = ""
        /// complete.
        @Output("complete.") public var status = ""

        public init() {}
    }

    public static let stageType = "vimeo.wait"
    public static let resource = StageResource.api
    public static let summary =
        "Waits until the platform has transcoded the video (transcode.status complete), bounded."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let api = try options.connection.connect(context: context)
        try await poll(every: options.interval, for: options.timeout, what: "transcode.status complete") {
            let video = try await api.object(
                .GET, "\(options.uri)?fields=transcode.status,upload.status", doing: "checking \(options.uri)")
            if video.at("upload.status")?.stringValue == "error" {
                // A pull the platform could not fetch, or an upload it could not take.
                throw PlatformError(.serverFailure, "the platform reports an upload error for \(options.uri)")
            }
            switch video.at("transcode.status")?.stringValue {
            case "complete": return true
            case "error": throw PlatformError(.serverFailure, "the platform could not transcode \(options.uri)")
            default: return false
            }
        }
        return Outputs.with {
            $0.uri = options.uri
            $0.status = "complete"
        }
    }
}
