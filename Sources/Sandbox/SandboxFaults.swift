import StageKit

/// Faults the sandbox injects so clients can prove their retry and resume logic.
///
/// The same shape is accepted as JSON by `POST /sandbox/faults` (keys as the property names;
/// a missing key means "off"), which replaces the whole set.
public struct SandboxFaults: Sendable, Equatable, Codable {
    /// Fraction (0…1) of API and upload requests answered with 500, 503 (`Retry-After: 1`) or
    /// 429 (`Retry-After: 1`) before they are processed, so a retry is always safe.
    public var errorRate: Double
    /// Seed of the generator that decides which requests fail, so a run is reproducible.
    public var seed: UInt64
    /// Close the connection after reading this many bytes of an upload body (tus `PATCH`,
    /// streaming `PUT`); the bytes that arrived are kept, as after a real network cut.
    public var dropAfterBytes: Int64?
    /// Fraction (0…1) of upload requests that `dropAfterBytes` applies to.
    public var dropRate: Double
    /// Seconds added before answering each API or upload request.
    public var latency: Double
    /// Seconds after which an access token (from its first use, or its issue by
    /// `POST /oauth/token`) stops working and answers 401 with error code 8003.
    public var tokenLifetime: Double?
    /// Ignore `Idempotency-Key` on `POST /me/videos` and `POST /generic/assets`, as Vimeo does (it does not
    /// document the header): a repeated create makes another object.
    public var ignoreIdempotencyKeys: Bool
    /// Seconds `POST /me/videos` and `POST /generic/assets` wait after creating before they answer: the
    /// window in which a client that dies has created an object it never heard of.
    public var createDelay: Double
    /// Seconds after its creation before a video shows up in `GET /me/videos?query=…`, or an asset in
    /// `GET /generic/assets?name=…` (a search index that lags behind, as listings do).
    public var listingLag: Double

    /// Creates a fault set; the defaults inject nothing.
    public init(
        errorRate: Double = 0,
        seed: UInt64 = 1,
        dropAfterBytes: Int64? = nil,
        dropRate: Double = 1,
        latency: Double = 0,
        tokenLifetime: Double? = nil,
        ignoreIdempotencyKeys: Bool = false,
        createDelay: Double = 0,
        listingLag: Double = 0
    ) {
        self.errorRate = errorRate
        self.seed = seed
        self.dropAfterBytes = dropAfterBytes
        self.dropRate = dropRate
        self.latency = latency
        self.tokenLifetime = tokenLifetime
        self.ignoreIdempotencyKeys = ignoreIdempotencyKeys
        self.createDelay = createDelay
        self.listingLag = listingLag
    }

    private enum CodingKeys: String, CodingKey {
        case errorRate, seed, dropAfterBytes, dropRate, latency, tokenLifetime, ignoreIdempotencyKeys, createDelay
        case listingLag
    }

    /// Decodes a fault set where every key is optional.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            errorRate: try container.decodeIfPresent(Double.self, forKey: .errorRate) ?? 0,
            seed: try container.decodeIfPresent(UInt64.self, forKey: .seed) ?? 1,
            dropAfterBytes: try container.decodeIfPresent(Int64.self, forKey: .dropAfterBytes),
            dropRate: try container.decodeIfPresent(Double.self, forKey: .dropRate) ?? 1,
            latency: try container.decodeIfPresent(Double.self, forKey: .latency) ?? 0,
            tokenLifetime: try container.decodeIfPresent(Double.self, forKey: .tokenLifetime),
            ignoreIdempotencyKeys: try container.decodeIfPresent(Bool.self, forKey: .ignoreIdempotencyKeys) ?? false,
            createDelay: try container.decodeIfPresent(Double.self, forKey: .createDelay) ?? 0,
            listingLag: try container.decodeIfPresent(Double.self, forKey: .listingLag) ?? 0
        )
    }
}
