import AsyncHTTPClient
import Foundation
import HTTPTransport
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
public import StageKit

/// `vimeo.picture`: makes an image (the exported thumbnail) the video's picture, as Vimeo documents it:
/// `POST {uri}/pictures` creates a picture and answers its upload `link`, the image is `PUT` to the link, and
/// `PATCH` on the picture with `active: true` makes it the one shown. The picture's URI is checkpointed as
/// soon as it exists, so a rerun uploads to the same picture instead of creating another.
public struct VimeoPictureStage: Stage {
    /// The options of `vimeo.picture`.
    public struct Options: StageOptions {
        /// The API and the token.
        @OptionGroup public var connection: VimeoConnection
        /// The video's URI.
        @Option("The video's URI (${ticket.uri}).") public var uri: String
        /// The image: a JPEG or PNG file (${thumbnail.path}).
        @Option("The image: a JPEG or PNG file (${thumbnail.path}).") public var file: String

        public init() {}
    }

    /// The outputs of `vimeo.picture`.
    public struct Outputs: StageOutputs {
        /// The picture's URI, e.g. /videos/123/pictures/456.
        @Output("The picture's URI.") public var uri = ""
        /// Whether the platform reports it active.
        @Output("Whether the platform reports it active.") public var active = false

        public init() {}
    }

    /// What is known of the picture once it is created: where it is and where its image goes.
    struct Created: Codable, Sendable {
        var uri: String
        var link: String
    }

    public static let stageType = "vimeo.picture"
    public static let resource = StageResource.api
    public static let summary =
        "Makes an image the video's picture: POST {uri}/pictures, PUT the image to its link, PATCH it active."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let api = try options.connection.connect(context: context)
        let image: Data
        do {
            image = try Data(contentsOf: URL(fileURLWithPath: options.file))
        } catch {
            throw PlatformError(.invalidInput, "cannot read the image \(options.file): \(error.localizedDescription)")
        }
        let contentType = try Self.contentType(of: image, file: options.file)
        let created: Created
        if let earlier = context.lastCheckpoint(as: Created.self) {
            created = earlier
        } else {
            let action = "creating the picture (POST \(options.uri)/pictures)"
            let picture = try await api.object(
                .POST, "\(options.uri)/pictures", json: [:], expected: [200, 201], doing: action)
            created = Created(
                uri: try picture.requiredString("uri", in: action), link: try picture.requiredString("link", in: action)
            )
            try await context.checkpoint(created)
        }
        // The link is a capability on another host: it gets the image, never the token.
        var upload = HTTPClientRequest(url: created.link, method: .PUT, headers: [("Content-Type", contentType)])
        upload.body = .bytes(ByteBuffer(data: image))
        let action = "uploading the picture's image (PUT link)"
        let answer = try await api.exchange.send(upload, doing: action)
        guard (200..<300).contains(answer.status.code) else { throw HTTPFailure.platform(answer, doing: action) }
        let picture = try await api.object(
            .PATCH, created.uri, json: ["active": true], doing: "making \(created.uri) the video's picture")
        context.logger.info("\(created.uri) is the picture of \(options.uri)")
        return Outputs.with {
            $0.uri = created.uri
            $0.active = picture.at("active") == .bool(true)
        }
    }

    /// The image's type from its first bytes: Vimeo takes JPEG and PNG.
    static func contentType(of image: Data, file: String) throws -> String {
        if image.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if image.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        throw PlatformError(.invalidInput, "\(file) is not a JPEG or PNG image")
    }
}
