import StageKit

/// Unguessable identifiers: upload tokens, asset and standalone upload ids, access tokens.
enum RandomID {
    /// `bytes` random bytes as lowercase hex.
    static func hex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var text = ""
        text.reserveCapacity(bytes * 2)
        for _ in 0..<bytes {
            let byte = UInt8.random(in: 0...255, using: &generator)
            text += byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }
        return text
    }
}
