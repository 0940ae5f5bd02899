/// Digests as text: lowercase hexadecimal, two digits a byte, the form in which fingerprints, checksums and
/// signatures are stored, compared and sent. One spelling everywhere, so two digests of the same bytes always
/// compare equal as text.
public enum HexDigest {
    /// `bytes` (a digest, or any bytes) as lowercase hexadecimal.
    public static func text(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
