import Foundation

/// The filter and order of `GET /me/videos`: `query`, `sort` and `direction`, as Vimeo documents them.
struct VideoListing {
    /// How a listing is ordered.
    enum Sort: String {
        case date, alphabetical
        case modifiedTime = "modified_time"
        case `default`
    }

    /// Words that must all appear in the name or the description (case-insensitive); nil lists every video.
    var query: String?
    var sort: Sort
    var descending: Bool
    /// Videos created after this are not in search results yet (the Sandbox's `listingLag`).
    var indexedBefore: Date

    /// Reads the query parameters; an unknown `sort` or `direction` is a 400, as on Vimeo.
    init(query: String?, sort: String?, direction: String?, indexedBefore: Date) throws {
        self.query = query.flatMap { $0.isEmpty ? nil : $0 }
        guard let sort = Sort(rawValue: sort ?? "default") else {
            throw APIError.invalidParameter(
                "sort", "the Sandbox sorts by date, alphabetical or modified_time (default: date).")
        }
        self.sort = sort == .default ? .date : sort
        switch direction {
        case nil: descending = self.sort != .alphabetical
        case "desc": descending = true
        case "asc": descending = false
        default: throw APIError.invalidParameter("direction", "direction must be asc or desc.")
        }
        self.indexedBefore = indexedBefore
    }

    /// The videos that match, in order.
    func apply(to videos: [VideoRecord]) -> [VideoRecord] {
        var matching = videos
        if let query {
            let words = query.lowercased().split(whereSeparator: \.isWhitespace)
            matching = matching.filter { video in
                let text = (video.name + " " + (video.description ?? "")).lowercased()
                return video.createdAt <= indexedBefore && words.allSatisfy { text.contains($0) }
            }
        }
        let ascending = matching.sorted { left, right in
            switch sort {
            case .alphabetical: return (left.name, left.id) < (right.name, right.id)
            case .modifiedTime: return (left.modifiedAt, Int(left.id) ?? 0) < (right.modifiedAt, Int(right.id) ?? 0)
            case .date, .default: return (left.createdAt, Int(left.id) ?? 0) < (right.createdAt, Int(right.id) ?? 0)
            }
        }
        return descending ? ascending.reversed() : ascending
    }

    /// The listing's parameters for paging links (`query=…&sort=…&direction=…&`).
    var queryItems: String {
        var items: [String] = []
        if let query {
            items.append("query=" + (query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
        }
        items.append("sort=\(sort.rawValue)")
        items.append("direction=\(descending ? "desc" : "asc")")
        return items.map { $0 + "&" }.joined()
    }
}
