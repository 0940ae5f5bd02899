import Hummingbird
import StageKit

/// `GET`/`PATCH`/`DELETE /videos/ID`, `PUT /videos/ID/tags`, `POST`/`GET /videos/ID/versions` (a new
/// source file for the video), and the streaming `DELETE complete_uri`
/// (`/users/1/uploads/ID?video_file_id=…&signature=…`).
enum VideoRoutes {
    static func register(on api: RouterGroup<SandboxRequestContext>, services: SandboxServices) {
        registerVideo(on: api, services: services)
        registerTags(on: api, services: services)
        registerVersions(on: api, services: services)
    }

    /// Reading, patching and deleting a video, and completing a streaming upload.
    private static func registerVideo(on api: RouterGroup<SandboxRequestContext>, services: SandboxServices) {
        api.get("videos/:id") { request, context in
            let id = try context.parameters.require("id")
            guard let json = await services.state.renderVideo(id) else { throw APIError.notFound("video") }
            return JSONResponse.make(selected(json, request.fieldSelection), contentType: JSONResponse.videoType)
        }

        api.patch("videos/:id") { request, context in
            let id = try context.parameters.require("id")
            var request = request
            let body = try await JSONResponse.readObject(&request)
            guard await services.state.video(id) != nil else { throw APIError.notFound("video") }
            let change = try VideoValidation.change(body)
            let video = try await services.state.updateVideo(id, change)
            let json = await services.state.render(video)
            return JSONResponse.make(selected(json, request.fieldSelection), contentType: JSONResponse.videoType)
        }

        api.delete("videos/:id") { _, context in
            let id = try context.parameters.require("id")
            guard await services.state.deleteVideo(id) else { throw APIError.notFound("video") }
            return JSONResponse.empty(.noContent)
        }

        // `complete_uri` of a legacy ticket (`type: streaming`) or of a 3.4 streaming video.
        api.delete("users/:user/uploads/:id") { request, context in
            let id = try context.parameters.require("id")
            let (fileID, signature) = (request.query("video_file_id"), request.query("signature"))
            let video =
                await services.state.ticket(id) != nil
                ? try await services.state.completeTicket(id, videoFileID: fileID, signature: signature)
                : try await services.state.completeStreaming(videoID: id, videoFileID: fileID, signature: signature)
            return JSONResponse.empty(.created, headers: [.location: "/videos/\(video.id)"])
        }
    }

    /// A video's tags.
    private static func registerTags(on api: RouterGroup<SandboxRequestContext>, services: SandboxServices) {
        api.put("videos/:id/tags") { request, context in
            let id = try context.parameters.require("id")
            var request = request
            let body = try await JSONResponse.readValue(&request)
            guard await services.state.video(id) != nil else { throw APIError.notFound("video") }
            let tags = try VideoValidation.tags(body)
            let video = try await services.state.setTags(id, tags)
            let json: JSONValue = .array(video.tags.map(VideoRepresentation.tag))
            return JSONResponse.make(json, contentType: "application/vnd.vimeo.tag+json; charset=utf-8")
        }

        api.get("videos/:id/tags") { _, context in
            let id = try context.parameters.require("id")
            guard let video = await services.state.video(id) else { throw APIError.notFound("video") }
            let tags = video.tags.map(VideoRepresentation.tag)
            let list: JSONValue = [
                "total": .integer(Int64(tags.count)), "page": 1, "per_page": .integer(Int64(max(tags.count, 1))),
                "data": .array(tags),
            ]
            return JSONResponse.make(list, contentType: "application/vnd.vimeo.tag+json; charset=utf-8")
        }

    }

    /// A video's versions (new source files).
    private static func registerVersions(on api: RouterGroup<SandboxRequestContext>, services: SandboxServices) {
        api.post("videos/:id/versions") { request, context in
            let id = try context.parameters.require("id")
            var request = request
            let body = try await JSONResponse.readObject(&request)
            let asked = try VideoValidation.version(body, maxSize: services.configuration.maxUploadSize)
            let faults = services.faults.faults
            let version = try await services.state.createVersion(
                of: id, fileName: asked.fileName, approach: asked.approach, size: asked.size, link: asked.link,
                idempotencyKey: faults.ignoreIdempotencyKeys ? nil : request.idempotencyKey)
            await PullFetch(services: services).start(version.uploadID)
            let json = await services.state.render(version)
            return JSONResponse.make(
                selected(json, request.fieldSelection), status: .created, contentType: JSONResponse.versionType)
        }

        api.get("videos/:id/versions") { request, context in
            let id = try context.parameters.require("id")
            guard await services.state.video(id) != nil else { throw APIError.notFound("video") }
            var data: [JSONValue] = []
            for version in await services.state.versions(of: id) {
                data.append(selected(await services.state.render(version), request.fieldSelection))
            }
            let list: JSONValue = [
                "total": .integer(Int64(data.count)), "page": 1, "per_page": .integer(Int64(max(data.count, 1))),
                "data": .array(data),
            ]
            return JSONResponse.make(list, contentType: JSONResponse.versionType)
        }
    }

    /// `GET /videos/ID/watch`: a minimal page standing in for vimeo.com's, so `link` leads somewhere.
    static func registerWatchPage(on router: Router<SandboxRequestContext>, services: SandboxServices) {
        router.get("videos/:id/watch") { _, context in
            let id = try context.parameters.require("id")
            guard let video = await services.state.video(id) else { throw APIError.notFound("video") }
            let name = video.name.replacingHTMLSpecials
            var response = JSONResponse.text(
                "<!doctype html><title>\(name)</title><h1>\(name)</h1>"
                    + "<p>Sandbox video \(video.id), \(video.size) bytes.</p>\n"
            )
            response.headers[.contentType] = "text/html; charset=utf-8"
            return response
        }
    }
}

extension String {
    fileprivate var replacingHTMLSpecials: String {
        var text = ""
        for character in self {
            switch character {
            case "<": text += "&lt;"
            case ">": text += "&gt;"
            case "&": text += "&amp;"
            case "\"": text += "&quot;"
            default: text.append(character)
            }
        }
        return text
    }
}
