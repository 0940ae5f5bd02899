import Foundation
import Hummingbird
import StageKit

/// `GET /me`, `POST /me/videos` (create a video and its upload, or a legacy streaming ticket) and
/// `GET /me/videos`.
enum MeRoutes {
    static func register(on api: RouterGroup<SandboxRequestContext>, services: SandboxServices) {
        api.get("me") { request, _ in
            let user = await services.state.renderUser()
            return JSONResponse.make(selected(user, request.fieldSelection), contentType: JSONResponse.userType)
        }

        api.post("me/videos") { request, _ in
            var request = request
            let body = try await JSONResponse.readObject(&request)
            let faults = services.faults.faults
            let key = faults.ignoreIdempotencyKeys ? nil : request.idempotencyKey
            if body["type"] != nil {
                try VideoValidation.legacyTicket(body, accept: request.headers[.accept])
                let ticket = await services.state.createTicket(idempotencyKey: key)
                let json = await services.state.render(ticket)
                // API 3.2/3.3: 201 with the ticket itself.
                return JSONResponse.make(json, status: .created, contentType: JSONResponse.ticketType)
            }
            let creation = try VideoValidation.creation(body, maxSize: services.configuration.maxUploadSize)
            let video = try await services.state.createVideo(creation, idempotencyKey: key)
            await PullFetch(services: services).start(video.uploadID)
            if faults.createDelay > 0 {
                try await Task.sleep(for: .milliseconds(Int64(faults.createDelay * 1000)))
            }
            let json = await services.state.render(video)
            // Vimeo 3.4 answers 200 (not 201) with the new video, also when the key replays it.
            return JSONResponse.make(selected(json, request.fieldSelection), contentType: JSONResponse.videoType)
        }

        // As documented: `query` (words of the name or description), `sort` (date, alphabetical,
        // modified_time, duration; default date), `direction` (asc, desc; default desc for dates), `page` and
        // `per_page` (at most 100), `fields`.
        api.get("me/videos") { request, _ in
            let perPage = min(100, max(1, request.query("per_page").flatMap { Int($0) } ?? 25))
            let page = max(1, request.query("page").flatMap { Int($0) } ?? 1)
            let listing = try VideoListing(
                query: request.query("query"), sort: request.query("sort"), direction: request.query("direction"),
                indexedBefore: Date().addingTimeInterval(-services.faults.faults.listingLag))
            let videos = listing.apply(to: await services.state.videos())
            let lastPage = max(1, (videos.count + perPage - 1) / perPage)
            let slice = videos.dropFirst((page - 1) * perPage).prefix(perPage)
            var data: [JSONValue] = []
            for video in slice {
                data.append(selected(await services.state.render(video), request.fieldSelection))
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
            return JSONResponse.make(list, contentType: JSONResponse.videoType)
        }
    }
}
