import Foundation
import Hummingbird
import StageKit

/// `GET /me`, `POST /me/videos` (create a video and its upload, or a legacy streaming ticket) and
/// `GET /me/videos`.
enum MeRoutes {
    static func register(on api: RouterGroup<SandboxRequestContext>, vimeo: VimeoState) {
        api.get("me") { request, _ in
            let user = await vimeo.renderUser()
            return JSONResponse.make(selected(user, request.fieldSelection), contentType: VimeoMediaType.user)
        }
        api.post("me/videos") { request, _ in
            try await self.create(request, vimeo: vimeo)
        }
        // As documented: `query` (words of the name or description), `sort` (date, alphabetical,
        // modified_time, duration; default date), `direction` (asc, desc; default desc for dates), `page` and
        // `per_page` (at most 100), `fields`.
        api.get("me/videos") { request, _ in
            try await self.list(request, vimeo: vimeo)
        }
    }

    /// A video and its upload, or (with `type`) a legacy streaming ticket.
    private static func create(_ request: Request, vimeo: VimeoState) async throws -> Response {
        var request = request
        let body = try await JSONResponse.readObject(&request)
        let key = request.idempotencyKey(honouredBy: vimeo.core.faults)
        if body["type"] != nil {
            try VideoValidation.legacyTicket(body, accept: request.headers[.accept])
            let ticket = await vimeo.createTicket(idempotencyKey: key)
            let json = await vimeo.render(ticket)
            // API 3.2/3.3: 201 with the ticket itself.
            return JSONResponse.make(json, status: .created, contentType: VimeoMediaType.ticket)
        }
        let creation = try VideoValidation.creation(body, maxSize: vimeo.core.configuration.maxUploadSize)
        let video = try await vimeo.createVideo(creation, idempotencyKey: key)
        await PullFetch(vimeo: vimeo).start(video.uploadID)
        try await vimeo.core.faults.delayCreateAnswer()
        let json = await vimeo.render(video)
        // Vimeo 3.4 answers 200 (not 201) with the new video, also when the key replays it.
        return JSONResponse.make(selected(json, request.fieldSelection), contentType: VimeoMediaType.video)
    }

    /// One page of the videos that match the listing's parameters.
    private static func list(_ request: Request, vimeo: VimeoState) async throws -> Response {
        let perPage = min(100, max(1, request.query("per_page").flatMap { Int($0) } ?? 25))
        let page = max(1, request.query("page").flatMap { Int($0) } ?? 1)
        let listing = try VideoListing(
            query: request.query("query"), sort: request.query("sort"), direction: request.query("direction"),
            indexedBefore: Date().addingTimeInterval(-vimeo.core.faults.faults.listingLag))
        let videos = listing.apply(to: await vimeo.videos())
        let lastPage = max(1, (videos.count + perPage - 1) / perPage)
        var data: [JSONValue] = []
        for video in videos.dropFirst((page - 1) * perPage).prefix(perPage) {
            data.append(selected(await vimeo.render(video), request.fieldSelection))
        }
        func pageLink(_ number: Int) -> JSONValue {
            .string("/me/videos?\(listing.queryItems)page=\(number)&per_page=\(perPage)")
        }
        let list: JSONValue = [
            "total": .integer(Int64(videos.count)),
            "page": .integer(Int64(page)),
            "per_page": .integer(Int64(perPage)),
            "paging": [
                "next": page < lastPage ? pageLink(page + 1) : .null,
                "previous": page > 1 ? pageLink(page - 1) : .null,
                "first": pageLink(1),
                "last": pageLink(lastPage),
            ],
            "data": .array(data),
        ]
        return JSONResponse.make(list, contentType: VimeoMediaType.video)
    }
}
