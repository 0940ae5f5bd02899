import Foundation
import Logging
import NIOHTTP1
import StageKit

/// Finds and adopts the video an unanswered `POST /me/videos` created, through the documented listing
/// (`GET /me/videos?query=…`, newest first, page by page): Vimeo takes no idempotency key, so this is what
/// keeps a rerun after a crash from leaving a second video.
struct VideoReconciler: Sendable {
    let api: VimeoAPI
    let marker: String
    let logger: Logger

    /// The fields the listing asks for: enough to adopt a video without another request.
    static let fields = "uri,name,description,link,upload,created_time"

    /// The text a created video's description carries: the marker alone, or after the description asked for.
    static func description(_ description: String?, marker: String) -> String {
        description.map { "\($0)\n\n\(marker)" } ?? marker
    }

    /// The video that carries the marker (the oldest, when several do: the others, which no upload reached,
    /// are deleted), or nil when none does after `wait` (listings can lag behind creation, so an empty
    /// answer is asked again until then).
    func adopt(waiting wait: TimeSpan) async throws -> JSONValue? {
        let found = try await lookUp(waiting: wait, for: "a video that carries \(marker)", logger: logger) {
            try await videos()
        }
        guard let kept = found.last else { return nil }
        for video in found.dropLast() {
            guard let uri = video.at("uri")?.stringValue else { continue }
            if video.at("upload.status")?.stringValue == "complete" {
                logger.warning("\(uri) also carries \(marker) and has an upload: left alone")
                continue
            }
            _ = try await api.call(
                .DELETE, uri, expected: [204, 404], doing: "deleting \(uri), a second video of one create")
            logger.notice("deleted \(uri): a second, empty video of one create")
        }
        logger.notice("adopted \(kept.at("uri")?.stringValue ?? "?"), created by a create that was never answered")
        return kept
    }

    /// Every video whose name or description carries the marker, newest first.
    private func videos() async throws -> [JSONValue] {
        let action = "looking for the video of an unanswered create (GET /me/videos)"
        var next: String? =
            "/me/videos?query=\(marker)&sort=date&direction=desc&per_page=100&fields=\(Self.fields)"
        var found: [JSONValue] = []
        while let path = next {
            let page = try await api.object(.GET, path, doing: action)
            for video in page.at("data")?.arrayValue ?? [] {
                let text = (video.at("name")?.stringValue ?? "") + " " + (video.at("description")?.stringValue ?? "")
                if text.contains(marker) { found.append(video) }
            }
            next = page.at("paging.next")?.stringValue
        }
        return found
    }
}
