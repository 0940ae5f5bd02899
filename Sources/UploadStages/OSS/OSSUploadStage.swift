import AsyncHTTPClient
import Crypto
import Foundation
public import HTTPTransport
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
public import StageKit
import StageRuntime

/// `oss.upload`: Alibaba Cloud OSS multipart upload signed the OSS way (V4 by default, V1 by choice, with
/// `x-oss-security-token` for the temporary credentials VOD's `UploadAuth` carries), parallel parts, per-part
/// retries and resume, on the
/// transfer machinery `s3.upload` uses: the upload id and each finished part are checkpointed; after a crash
/// the server's part list (ListParts) says what arrived, and a listed part whose MD5 (its ETag) matches the
/// file is kept even when the crash came before its checkpoint. An expired credential (`SecurityTokenExpired`,
/// `InvalidAccessKeyId`, or the expiration known in advance) asks the stage's `refreshWith` stage for a new
/// one, and the upload goes on from its checkpoint without sending finished parts again.
public struct OSSUploadStage: Stage {
    /// The options of `oss.upload`.
    public struct Options: StageOptions {
        /// The OSS endpoint, e.g. https://oss-cn-shanghai.aliyuncs.com.
        @Option("The OSS endpoint, e.g. ${ticket.endpoint} or https://oss-cn-shanghai.aliyuncs.com.")
        public var endpoint: String
        /// The bucket.
        @Option("The bucket, e.g. ${ticket.bucket}.") public var bucket: String
        /// The object key.
        @Option("The object key, e.g. ${ticket.object}.") public var key: String
        /// The file (default: the input file).
        @Option("The file (default: the input file).") public var file: String?
        /// The AccessKey: a temporary one from aliyun.vod.ticket's upload address (`${ticket.accessKeyId}`, …),
        /// or the account's.
        @OptionGroup public var credentials: AlibabaCredentials
        /// When the credential expires (ISO 8601), to renew it before it does.
        @Option("When the credential expires (ISO 8601, ${ticket.expiration}): it is renewed renewBefore ahead.")
        public var expiration: String?
        /// How long before `expiration` to renew the credential (through refreshWith).
        @Option("How long before expiration to renew the credential (through refreshWith).")
        public var renewBefore = TimeSpan(seconds: 60)
        /// Bytes per part (a smaller one is raised to 100 KiB; grown so there are at most 10,000 parts).
        @Option(
            "Bytes per part (a smaller one is raised to 100 KiB; grown so there are at most 10,000 parts).",
            maximum: 5_368_709_120)
        public var partSize = ByteCount(8 << 20)
        /// Parts in flight at once.
        @Option(
            "Parts in flight at once (memory stays at a few MiB whatever the part size).", minimum: 1, maximum: 32
        )
        public var concurrency = 4
        /// Content-Type of the object (default: from the file extension).
        @Option("Content-Type of the object (default: from the file extension).") public var contentType: String?
        /// Address the bucket in the path (default: true when the endpoint is an IP address or localhost).
        @Option("Address the bucket in the path (default: true when the endpoint is an IP address or localhost).")
        public var pathStyle: Bool?
        /// The signature the requests carry.
        @Option(
            "The signature: v4 (OSS4-HMAC-SHA256, which every account takes) or v1 (refused to accounts made since 2025-03-01 and to buckets made since 2025-09-01)."
        )
        public var signatureVersion = SignatureVersion.v4
        /// The region a V4 signature is scoped to.
        @Option(
            "The region a V4 signature is scoped to, e.g. ${ticket.region} or cn-shanghai (default: read from the endpoint's name)."
        )
        public var region: String?
        /// Also give a presigned V4 GET URL of the object, valid this long.
        @Option(
            "Also give a presigned GET URL of the object (sharedURL, V4-signed), valid this long: for a platform that pulls the file (aliyun.vod.pull). Anybody holding it can read the object until then, and it is kept with the outputs. A URL signed with a temporary credential stops working when the credential expires: it is signed for no longer than expiration allows (sharedUntil says until when).",
            minimum: 1, maximum: 604_800)
        public var shareFor: TimeSpan?
        /// Abort a part that sends nothing for this long, then retry it.
        @Option("Abort a part that sends nothing for this long, then retry it.", exclusiveMinimum: 0)
        public var stallTimeout = TimeSpan(seconds: 30)

        public init() {}

        /// A V4 signature needs a region: refused when neither `region` nor a literal endpoint names one (an
        /// endpoint from a template is checked once it is resolved).
        public static func problems(in with: JSONValue) -> [OptionProblem] {
            let isV4 =
                with["signatureVersion"]?.stringValue ?? SignatureVersion.v4.rawValue == SignatureVersion.v4.rawValue
            if !isV4, with["shareFor"] != nil {
                return [
                    OptionProblem(
                        at: JSONPath.root.appending("shareFor"),
                        "a shared URL is V4-signed: leave signatureVersion at v4")
                ]
            }
            guard isV4,
                with["region"]?.stringValue?.isEmpty ?? true,
                let endpoint = with["endpoint"]?.stringValue, !endpoint.contains("${"),
                OSSSigner.region(ofEndpoint: endpoint) == nil
            else { return [] }
            return [
                OptionProblem(
                    at: JSONPath.root.appending("region"),
                    "a V4 signature names a region, and the endpoint \(endpoint) does not: give region (${ticket.region} with aliyun.vod.ticket, or the bucket's region such as cn-shanghai), or signatureVersion v1"
                )
            ]
        }
    }

    /// OSS's signatures: Alibaba's guide to upgrading from V1 to V4 says V1 is not available to accounts made since
    /// 2025-03-01 nor to buckets made since 2025-09-01 (a V1-signed request gets 403, EC 0002-00000080).
    public enum SignatureVersion: String, OptionChoice {
        /// `OSS4-HMAC-SHA256`, scoped to a region.
        case v4
        /// `OSS AccessKeyId:Signature` (HMAC-SHA1), for older accounts and buckets and endpoints that speak nothing
        /// else.
        case v1
    }

    /// The outputs of `oss.upload`.
    public struct Outputs: StageOutputs {
        /// The object.
        @OutputGroup public var object = UploadedObject()
        /// A presigned GET URL of the object (shareFor); empty when not asked for.
        @Output("A presigned V4 GET URL of the object, valid for shareFor; empty when not asked for.")
        public var sharedURL = ""
        /// When sharedURL stops working (ISO 8601); empty when there is none.
        @Output(
            "When sharedURL stops working (ISO 8601): shareFor after the upload, or the temporary credential's expiration if that comes first; empty when there is no sharedURL."
        )
        public var sharedUntil = ""

        public init() {}
    }

    public static let stageType = "oss.upload"
    public static let inputFileOption = "file"
    public static let landingOutput = "location"
    /// OSS's multipart upload takes parts in any order, as S3's does: part 1, the head, goes last.
    public static let streamRole = StreamRole.follower
    public static let resource = StageResource.network
    /// Its requests are retried by the stage itself (resuming from the server), under the stage's `retry`.
    public static let retriesItself = true
    public static let summary =
        "Uploads a file to Alibaba Cloud OSS with multipart (V4 signature, or V1; STS security token), parallel parts and resume; renews an expiring credential through refreshWith."

    public init() {}

    public func run(_ options: Options, context: StageContext) async throws -> Outputs {
        if let stream = context.services[ExportStreamKey.self] {
            return try await runStreamed(options, stream: stream, context: context)
        }
        let file = try UploadFile(path: options.file ?? context.item.path)
        let backend = try OSSBackend(options: options, file: file, context: context)
        let partSize = max(100 << 10, options.partSize.bytes, (file.size + 9_999) / 10_000)
        guard partSize <= 5 << 30 else {
            throw StageFailure(
                "\(ByteCount(file.size)) needs parts over 5 GiB; OSS objects are at most 48.8 TiB", kind: .invalidInput)
        }
        // The target names the object, not the credential: a renewed credential resumes the same upload.
        let upload = MultipartUpload(
            file: file, partSize: partSize, concurrency: options.concurrency,
            target: "oss:\(backend.objectURL)", context: context, backend: backend)
        let (completed, _) = try await upload.run()
        return try Self.outputs(options, completed, size: file.size, signer: backend.signer, context: context)
    }

    /// The object, and its presigned URL when `shareFor` asks for one (signed now, so valid `shareFor` from the
    /// end of the upload, or until the temporary credential it is signed with expires, if sooner).
    private static func outputs(
        _ options: Options, _ completed: CompletedUpload, size: Int64, signer: OSSSigner, context: StageContext
    ) throws -> Outputs {
        try Outputs.with {
            $0.object = UploadedObject(bucket: options.bucket, key: options.key, completed, size: size)
            guard let shareFor = options.shareFor else { return }
            guard case .v4(let region) = signer.version else {
                throw StageFailure("shareFor needs signatureVersion v4", kind: .invalidOptions)
            }
            let now = Date()
            let seconds = try sharedSeconds(options, shareFor: shareFor, now: now, logger: context.logger)
            let query = signer.presignV4(
                method: "GET", bucket: options.bucket, key: options.key, expires: seconds, date: now, region: region)
            $0.sharedURL =
                try OSSBackend.objectURL(options) + "?"
                + query.map { "\(OSSBackend.encode($0.0))=\(OSSBackend.encode($0.1))" }.joined(separator: "&")
            $0.sharedUntil = ISO8601DateFormatter().string(from: now.addingTimeInterval(TimeInterval(seconds)))
        }
    }

    /// How long the shared URL is signed for: `shareFor`, or less when the credential's `expiration` comes first
    /// (OSS refuses a URL signed with a temporary credential once the credential has expired, so a longer one
    /// would promise what it cannot keep). A credential already expired fails: the URL would never work.
    static func sharedSeconds(_ options: Options, shareFor: TimeSpan, now: Date, logger: Logger) throws -> Int {
        let wanted = Int(shareFor.seconds.rounded())
        guard let text = options.expiration, !text.isEmpty, let expiration = ISO8601DateFormatter().date(from: text)
        else { return wanted }
        let left = Int(expiration.timeIntervalSince(now).rounded(.down))
        guard left > 0 else {
            throw StageFailure.retryable(
                "the credential expired at \(text): a URL signed with it would not work; renew it (refreshWith)",
                kind: .notAuthenticated)
        }
        if left < wanted {
            logger.warning(
                "sharedURL works until the credential expires at \(text), \(left) s from now, not for shareFor (\(shareFor)): give a credential that lives longer, or pull sooner"
            )
        }
        return min(wanted, left)
    }

    /// `"stream": true`: uploads the export the stage follows while it is written (``StreamedMultipartUpload``),
    /// as `s3.upload` does. The part size is fixed before the file's size is known: at least the option's, and
    /// large enough for an export twice the input's size in 10,000 parts.
    private func runStreamed(_ options: Options, stream: ExportStream, context: StageContext) async throws -> Outputs {
        let partSize = max(100 << 10, options.partSize.bytes, (2 * context.item.size + 9_999) / 10_000)
        let upload = StreamedMultipartUpload(
            stream: stream, partSize: partSize, concurrency: options.concurrency,
            target: "oss:\(try OSSBackend.objectURL(options)) streamed", context: context,
            backend: { file in try OSSBackend(options: options, file: file, context: context) })
        let (completed, size) = try await upload.run()
        let signer = OSSSigner(
            credentials: try options.credentials.accessKey(), version: OSSBackend.signatureVersion(options))
        return try Self.outputs(options, completed, size: size, signer: signer, context: context)
    }
}
