import HTTPTypes
import StageKit

/// Header names the standard set of `HTTPField.Name` lacks: tus 1.0.0, idempotency, method override.
extension HTTPField.Name {
    static let tusResumable = named("Tus-Resumable")
    static let tusVersion = named("Tus-Version")
    static let tusExtension = named("Tus-Extension")
    static let tusMaxSize = named("Tus-Max-Size")
    static let tusChecksumAlgorithm = named("Tus-Checksum-Algorithm")
    static let uploadOffset = named("Upload-Offset")
    static let uploadLength = named("Upload-Length")
    static let uploadDeferLength = named("Upload-Defer-Length")
    static let uploadMetadata = named("Upload-Metadata")
    static let uploadExpires = named("Upload-Expires")
    static let uploadChecksum = named("Upload-Checksum")
    static let idempotencyKey = named("Idempotency-Key")
    static let methodOverride = named("X-HTTP-Method-Override")

    /// Builds a name from a literal token. `HTTPField.Name.init?` rejects only strings that are not
    /// RFC 9110 tokens, which none of the literals above is; the fallback keeps this total without
    /// a force unwrap (and `HeaderNameTests` checks every name survives).
    private static func named(_ token: String) -> HTTPField.Name {
        HTTPField.Name(token) ?? .via
    }
}
