import StageKit

/// A `Content-Range` request header of the resumable `PUT` protocol.
enum ContentRange: Equatable, Sendable {
    /// `bytes START-END/SIZE` (`SIZE` may be `*`): a piece of the file, END inclusive.
    case bytes(start: Int64, end: Int64, size: Int64?)
    /// `bytes */SIZE` or `bytes */*` with an empty body: "how much do you have?".
    case probe(size: Int64?)

    /// Parses the header; `nil` when it is malformed.
    init?(_ header: String) {
        let trimmed = header.trimmingSpaces
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst("bytes ".count).trimmingSpaces
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let size: Int64?
        if halves[1] == "*" {
            size = nil
        } else if let value = Int64(halves[1]), value >= 0 {
            size = value
        } else {
            return nil
        }
        if halves[0] == "*" {
            self = .probe(size: size)
            return
        }
        let bounds = halves[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]), start >= 0, end >= start
        else { return nil }
        if let size, end >= size { return nil }
        self = .bytes(start: start, end: end, size: size)
    }

    /// The `Range` response header reporting `stored` bytes, `nil` when nothing is stored yet
    /// (the protocol sends no `Range` then).
    static func rangeHeader(stored: Int64) -> String? {
        stored > 0 ? "bytes=0-\(stored - 1)" : nil
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        String(self.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
