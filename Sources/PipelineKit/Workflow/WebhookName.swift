import Crypto
import Foundation
import StageKit

/// How the ledgers name a webhook in their record of the notifications sent: a digest of its URL, never the URL,
/// which is the webhook's secret (whoever holds it can post to the channel). The record keeps each message from
/// being sent twice; a digest tells two webhooks apart as well as the URL did.
public enum WebhookName {
    /// What comes before the digest, so a key says what its last part is.
    static let prefix = "webhook:"

    /// The name of the webhook at `url` in a notification's key.
    ///
    /// PostgreSQL computes the same for keys recorded by an earlier pipeline (`BatchSchema`'s additions): both
    /// change together.
    public static func of(_ url: String) -> String {
        prefix + HexDigest.text(SHA256.hash(data: Data("pipeline-webhook:\(url)".utf8)))
    }

    /// A key an earlier pipeline recorded, which ended with the webhook's URL after a space, with the URL replaced by
    /// its name; nil for a key that ends with no URL.
    public static func replacingURL(in key: String) -> String? {
        guard let space = key.lastIndex(of: " ") else { return nil }
        let url = key[key.index(after: space)...]
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else { return nil }
        return key[...space] + of(String(url))
    }
}
