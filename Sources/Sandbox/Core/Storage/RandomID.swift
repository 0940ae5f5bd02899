import StageKit

/// Unguessable identifiers: upload tokens, asset and standalone upload ids, access tokens.
enum RandomID {
    /// `bytes` random bytes as lowercase hex.
    static func hex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return HexDigest.text((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
