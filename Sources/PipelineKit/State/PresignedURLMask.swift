import Foundation

/// A presigned URL (an OSS or S3 `sharedURL`, a link a platform pulls) is a bearer credential: whoever holds it
/// reads the object. Wherever a URL is shown (logs, failures, `--report`, `plan`) or a stage's options are kept
/// for explanation, its signature, credential and token parameters are masked; its date and expiry stay readable.
/// Outputs that a later run reads back are not masked: a stage after the upload needs the working URL.
enum PresignedURLMask {
    /// What a masked parameter's value becomes.
    static let mask = "redacted"

    /// Whether a query parameter carries a secret: `x-oss-signature`, `X-Amz-Credential`, `x-oss-security-token`,
    /// V1's `Signature` and `OSSAccessKeyId`, and the like.
    static func isSecret(parameter name: String) -> Bool {
        let name = (name.removingPercentEncoding ?? name).lowercased()
        return name.hasSuffix("signature") || name.hasSuffix("credential") || name.hasSuffix("security-token")
            || name.hasSuffix("accesskeyid")
    }

    /// `text` with the secret query parameters of every URL in it masked.
    static func masked(_ text: String) -> String {
        guard text.contains("://"), text.contains("?") else { return text }
        var result = ""
        var word = ""
        for character in text {
            if character.isWhitespace || "\"'()<>,".contains(character) {
                result += maskedURL(word)
                result.append(character)
                word = ""
            } else {
                word.append(character)
            }
        }
        return result + maskedURL(word)
    }

    /// One word: a URL with a query has its secret parameters' values masked; anything else stays.
    private static func maskedURL(_ word: String) -> String {
        guard word.contains("://"), let question = word.firstIndex(of: "?") else { return word }
        let query = word[word.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
        let masked = query.map { pair -> String in
            guard let equals = pair.firstIndex(of: "="), isSecret(parameter: String(pair[..<equals])) else {
                return String(pair)
            }
            return String(pair[..<equals]) + "=" + mask
        }
        return String(word[...question]) + masked.joined(separator: "&")
    }
}
