import Foundation
import HTTPTransport
public import StageKit
import StageRuntime

/// `tus.upload`: a tus 1.0.0 client (core, creation, creation-with-upload, checksum, expiration,
/// termination). It creates the upload on an `endpoint`, or continues one someone else created at
/// `url` (Vimeo's `upload_link`: never POSTed to). The upload URL is checkpointed before the first byte
/// is sent; after a crash the stage asks the server for its offset (HEAD) and sends only the rest.
public struct TusUploadStage: Stage {
    /// The options of `tus.upload`.
    public struct Options: StageOptions {
        /// Create the upload here (POST), then send the file.
        @Option("Create the upload here (POST), then send the file.") public var endpoint: String?
        /// Continue an upload someone else created (e.g. Vimeo's upload_link); never POSTed to.
        @Option("Continue an upload someone else created (e.g. Vimeo's upload_link); never POSTed to.")
        public var url: String?
        /// The file (default: the input file).
        @Option("The file (default: the input file).") public var file: String?
        /// Bytes per PATCH (default: one streamed PATCH for the rest; 16 MiB when checksums are on).
        @Option(
            "Bytes per PATCH (default: one streamed PATCH for the rest; 16 MiB when checksums are on).", minimum: 1)
        public var chunkSize: ByteCount?
        /// Upload this many parts at once through the concatenation extension.
        @Option(
            "Upload this many parts at once through the concatenation extension (with endpoint, when the server offers it).",
            minimum: 1, maximum: 16)
        public var parallel = 1
        /// Extra request headers (e.g. Authorization).
        @Option("Extra request headers (e.g. Authorization).") public var headers: [String: String] = [:]
        /// Upload-Metadata (filename and filetype are filled in when missing).
        @Option("Upload-Metadata (filename and filetype are filled in when missing).")
        public var metadata: [String: String] = [:]
        /// Upload-Checksum per PATCH.
        @Option("Upload-Checksum per PATCH; auto uses sha1, md5 or sha256, the first the server offers.")
        public var checksum = Checksum.auto
        /// Abort a request that sends nothing for this long, then resume.
        @Option("Abort a request that sends nothing for this long, then resume.", exclusiveMinimum: 0)
        public var stallTimeout = TimeSpan(seconds: 30)

        public init() {}
    }

    /// The checksum of each PATCH.
    public enum Checksum: String, OptionChoice {
        /// The first the server offers of sha1 (every tus server with checksums has it), md5 and sha256, or
        /// none. The checksum guards against bytes damaged on the way, which any of them detects; SHA-256
        /// costs two to three times as much CPU, and where it is slower than the network it paces the upload.
        case auto
        /// SHA-1.
        case sha1
        /// SHA-256.
        case sha256
        /// MD5.
        case md5
        /// No checksum.
        case none
    }

    /// The outputs of `tus.upload`.
    public struct Outputs: StageOutputs {
        /// The upload's URL.
        @Output("The upload's URL.") public var url = ""
        /// Bytes uploaded (the file's size).
        @Output("Bytes uploaded.") public var size: Int64 = 0

        public init() {}
    }

    /// What the stage checkpoints.
    struct Progress: Codable, Sendable {
        var uploadURL: String
        /// Whether this stage created the upload (then it may create it anew when the server lost it).
        var created: Bool
        var fingerprint: UploadFile.Fingerprint
        /// The server's offset after the last acknowledged PATCH (informational: HEAD decides).
        var offset: Int64
        /// A parallel upload's partial uploads; `uploadURL` is empty until they are concatenated.
        var parts: [Segment]?
    }

    /// A stretch of the file that one tus upload carries: the whole file, or one part of a parallel upload.
    struct Segment: Codable, Sendable, Hashable {
        var url: String
        var start: Int64
        var end: Int64

        var length: Int64 { end - start }
    }

    public static let stageType = "tus.upload"
    public static let inputFileOption = "file"
    public static let landingOutput = "url"
    /// Partial uploads concatenate in any order, the head's last.
    public static let streamRole = StreamRole.follower
    public static let resource = StageResource.network
    /// Its requests are retried by the stage itself (resuming from the server), under the stage's `retry`.
    public static let retriesItself = true
    public static let summary =
        "Uploads a file with the tus 1.0 resumable protocol; resumes from the server's offset after a crash."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        guard (options.endpoint == nil) != (options.url == nil) else {
            throw StageFailure(
                "give either endpoint (create the upload) or url (continue an existing one)", kind: .invalidOptions)
        }
        if let stream = context.services[ExportStreamKey.self] {
            guard options.endpoint != nil else {
                throw StageFailure(
                    "a streamed tus upload creates partial uploads: give endpoint, not url", kind: .invalidOptions)
            }
            let upload = StreamedTusUpload(
                stream: stream, options: options,
                partSize: max(1 << 20, options.chunkSize?.bytes ?? 8 << 20), context: context)
            let (url, size) = try await upload.run()
            return Outputs.with {
                $0.url = url
                $0.size = size
            }
        }
        let file = try UploadFile(path: options.file ?? context.item.path)
        let session = TusSession(options: options, file: file, context: context)
        return try await session.upload()
    }
}
