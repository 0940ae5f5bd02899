/// AWS's `UriEncode`: RFC 3986 percent-encoding that keeps only the unreserved characters
/// (`A-Z a-z 0-9 - . _ ~`), with uppercase hex digits and `%20` (never `+`) for a space. It works on UTF-8
/// bytes, so text that is not valid UTF-8 once decoded still encodes faithfully.
enum URIEncoding {
    /// Encodes `bytes`; `keepingSlashes` leaves `/` as is, for paths.
    static func encode(_ bytes: some Sequence<UInt8>, keepingSlashes: Bool = false) -> String {
        var encoded: [UInt8] = []
        for byte in bytes {
            if isUnreserved(byte) || (keepingSlashes && byte == UInt8(ascii: "/")) {
                encoded.append(byte)
            } else {
                encoded += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// Decodes `bytes` and encodes them again, so equivalent spellings (`~` and `%7E`, `ሴ` and `%E1%88%B4`)
    /// come out the same.
    static func reencode(_ bytes: some Collection<UInt8>) -> String {
        encode(decode(bytes))
    }

    /// The bytes `encoded` stands for. A `%` not followed by two hex digits stays a literal `%`, as lenient
    /// servers read it, so no input is rejected; `+` stays `+` (it means a space only in HTML forms).
    static func decode(_ encoded: some Collection<UInt8>) -> [UInt8] {
        let bytes = Array(encoded)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return decoded
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
