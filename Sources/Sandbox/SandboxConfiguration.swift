import StageKit

/// Everything a sandbox needs to know before it starts listening.
///
/// The defaults give a sandbox that behaves like a healthy Vimeo account with plenty of quota:
/// ephemeral port on the loopback interface, a temporary data folder, one token (`sandbox-token`)
/// and no injected faults; and like an ApsaraVideo VOD account with one AccessKey pair
/// (`sandbox-access-key-id` / `sandbox-access-key-secret`) whose uploads go to the OSS bucket `vod-sandbox`.
public struct SandboxConfiguration: Sendable {
    /// Interface to bind; the sandbox is meant for loopback use only.
    public var host: String
    /// TCP port to bind; `0` picks a free ephemeral port, reported by ``RunningSandbox/port``.
    public var port: Int
    /// Folder holding the stored uploads and the JSON index. `nil` creates a temporary folder
    /// that is removed again when the sandbox stops.
    public var dataFolder: String?
    /// Bearer tokens the API accepts (Vimeo personal access tokens, in effect).
    public var tokens: [String]
    /// The account's upload quota (`upload_quota.space.max`), in bytes.
    public var quotaBytes: Int64
    /// Time between an upload completing and its `transcode.status` turning `complete`.
    public var transcodeDelay: Duration
    /// How long an incomplete upload stays resumable (`Upload-Expires`); afterwards it answers 410.
    public var uploadLifetime: Duration
    /// Largest upload accepted (`Tus-Max-Size`), in bytes.
    public var maxUploadSize: Int64
    /// The client allowed to obtain new access tokens from `POST /oauth/token`.
    public var client: SandboxClientCredentials
    /// Faults injected from the start; `POST /sandbox/faults` replaces them at run time.
    public var faults: SandboxFaults
    /// Base URL written into links (`upload_link`, `link`, …); `nil` uses `http://HOST:PORT` of the
    /// bound socket. Set it when the sandbox is reached through another name.
    public var publicBaseURL: String?
    /// Alibaba Cloud AccessKey pairs (id → secret) the VOD API and OSS accept.
    public var aliyunAccessKeys: [String: String]
    /// How long the temporary credentials of an upload address (`UploadAuth`) work; ApsaraVideo VOD's is
    /// 3,000 seconds.
    public var stsTTL: Duration
    /// The OSS bucket VOD's upload addresses name.
    public var ossBucket: String
    /// Whether OSS takes V1 signatures, as it does for accounts made before 2025-03-01 and their buckets made
    /// before 2025-09-01. Off by default, as for a new account: a V1-signed request gets 403 `AccessDenied`, EC
    /// `0002-00000080`, and only V4 (`OSS4-HMAC-SHA256`) works.
    public var acceptsOSSV1: Bool
    /// Whether ApsaraVideo VOD reviews videos before they are published (audit before publish): a transcoded video
    /// is then `Checking` instead of `Normal`, as until someone approves it in the console.
    public var vodReview: Bool
    /// Whether the temporary credentials of VOD's upload addresses may write their object but not read it: their
    /// HEAD and GET of the object answer 403 `AccessDenied`, while PutObject and the multipart calls, ListParts
    /// included, work (a policy granting `oss:PutObject` and `oss:ListParts` without `oss:GetObject`).
    public var ossSTSWriteOnly: Bool

    /// Creates a configuration; every parameter has a default suited to tests and the quick start.
    public init(
        host: String = "127.0.0.1",
        port: Int = 0,
        dataFolder: String? = nil,
        tokens: [String] = ["sandbox-token"],
        quotaBytes: Int64 = 1 << 40,
        transcodeDelay: Duration = .seconds(1),
        uploadLifetime: Duration = .seconds(24 * 60 * 60),
        maxUploadSize: Int64 = 1 << 40,
        client: SandboxClientCredentials = SandboxClientCredentials(),
        faults: SandboxFaults = SandboxFaults(),
        publicBaseURL: String? = nil,
        aliyunAccessKeys: [String: String] = ["sandbox-access-key-id": "sandbox-access-key-secret"],
        stsTTL: Duration = .seconds(3000),
        ossBucket: String = "vod-sandbox",
        acceptsOSSV1: Bool = false,
        vodReview: Bool = false,
        ossSTSWriteOnly: Bool = false
    ) {
        self.host = host
        self.port = port
        self.dataFolder = dataFolder
        self.tokens = tokens
        self.quotaBytes = quotaBytes
        self.transcodeDelay = transcodeDelay
        self.uploadLifetime = uploadLifetime
        self.maxUploadSize = maxUploadSize
        self.client = client
        self.faults = faults
        self.publicBaseURL = publicBaseURL
        self.aliyunAccessKeys = aliyunAccessKeys
        self.stsTTL = stsTTL
        self.acceptsOSSV1 = acceptsOSSV1
        self.vodReview = vodReview
        self.ossSTSWriteOnly = ossSTSWriteOnly
        self.ossBucket = ossBucket
    }
}

/// The OAuth client (`client_id:client_secret`, sent as HTTP Basic auth) that may ask
/// `POST /oauth/token` for a fresh access token.
public struct SandboxClientCredentials: Sendable, Equatable {
    /// The client identifier.
    public var clientID: String
    /// The client secret.
    public var clientSecret: String

    /// Creates client credentials; the defaults are documented so scripts can rely on them.
    public init(clientID: String = "sandbox-client", clientSecret: String = "sandbox-secret") {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }
}
