import Hummingbird
import StageKit

/// `GET`/`PATCH`/`DELETE /videos/ID`, `PUT /videos/ID/tags`, `POST`/`GET /videos/ID/versions` (a new
/// source file for the video), and the streaming `DELETE complete_uri`
/// (`/users/1/uploads/ID?video_file_id=…&signature=…`).
enum VideoRoutes {
    static func register(on api: RouterGroup<SandboxRequestContext>, vimeo: VimeoState) {
        registerVideo(on: api, vimeo: vimeo)
        registerTags(on: api, vimeo: vimeo)
        registerVersions(on: api, vimeo: vimeo)
    }

    /// Reading, patching and deleting a video, and completing a streaming upload.
    private static func registerVideo(on api: RouterGroup<SandboxRequestContext>, vimeo: VimeoState) {
        api.get("videos/:id") { request, context in
            let id = try context.parameters.require("id")
            guard let json = await vimeo.renderVideo(id) else { throw APIError.notFound("video") }
            return JSONResponse.make(selected(json, request.fieldSelection), contentType: VimeoMediaType.video)
        }

        api.patch("videos/:id") { request, context in
            let id = try context.parameters.require("id")
            var request = request
            let body = try await JSONResponse.readObject(&request)
            guard await vimeo.video(id) != nil else { throw APIError.notFound("video") }
            let change = try VideoValidation.change(body)
            let video = try await vimeo.updateVideo(id, change)
            let json = await vimeo.render(video)
            return JSONResponse.make(selected(json, request.fieldSelection), contentType: VimeoMediaType.video)
        }

        api.delete("videos/:id") { _, context in
            let id = try context.parameters.require("id")
            guard await vimeo.deleteVideo(id) else { throw APIError.notFound("video") }
            return JSONResponse.empty(.noContent)
        }

        // `complete_uri` of a legacy ticket (`type: streaming`) or of a 3.4 streaming video.
        api.delete("users/:user/uploads/:id") { request, context in
            let id = try context.parameters.require("id")
            let (fileID, signature) = (request.query("video_file_id"), request.query("signature"))
            let video =
                await vimeo.ticket(id) != nil
                ? try await vimeo.completeTicket(id, videoFileID: fileID, signature: signature)
                : try await vimeo.completeStreaming(videoID: id, videoFileID: fileID, signature: signature)
            return JSONResponse.empty(.created, headers: [.location: "/videos/\(video.id)"])
        }
    }

    /// A video's tags.
    private static func registerTags(on api: RouterGroup<SandboxRequestContext>, vimeo: VimeoState) {
        api.put("videos/:id/tags") { request, context in
            let id = try context.parameters.require("id")
            var request = request
            let body = try await JSONResponse.readValue(&request)
            guard await vimeo.video(id) != nil else { throw APIError.notFound("video") }
            let tags = try VideoValidation.tags(body)
            let video = try await vimeo.setTags(id, tags)
            let json: JSONValue = .array(video.tags.map(VideoRepresentation.tag))
            return JSONResponse.make(json, contentType: VimeoMediaType.tag)
        }

        api.get("videos/:id/tags") { _, context in
            let id = try context.parameters.require("id")
            guard let video = await vimeo.video(id) else { throw APIError.notFound("video") }
            let tags = video.tags.map(VideoRepresentation.tag)
            let list: JSONValue = [
                "total": .integer(Int64(tags.count)), "page": 1, "per_page": .integer(Int64(max(tags.count, 1))),
                "data": .array(tags),
            ]
            return JSONResponse.make(list, contentType: VimeoMediaType.tag)
        }

    }

    /// A video's versions (new source files).
    private static func registerVersions(on api: RouterGroup<SandboxRequestContext>, vimeo: VimeoState) {
        api.post("videos/:id/versions") { request, context in
            let id = try context.parameters.require("id")
            var request = request
            let body = try await JSONResponse.readObject(&request)
            let asked = try VideoValidation.version(body, maxSize: vimeo.core.configuration.maxUploadSize)
            let version = try await vimeo.createVersion(
                of: id, fileName: asked.fileName, approach: asked.approach, size: asked.size, link: asked.link,
                idempotencyKey: request.idempotencyKey(honouredBy: vimeo.core.faults))
            await PullFetch(vimeo: vimeo).start(version.uploadID)
            let json = await vimeo.render(version)
            return JSONResponse.make(
                selected(json, request.fieldSelection), status: .created, contentType: VimeoMediaType.version)
        }

        api.get("videos/:id/versions") { request, context in
            let id = try context.parameters.require("id")
            guard await vimeo.video(id) != nil else { throw APIError.notFound("video") }
            var data: [JSONValue] = []
            for version in await vimeo.versions(of: id) {
                data.append(selected(await vimeo.render(version), request.fieldSelection))
            }
            let list: JSONValue = [
                "total": .integer(Int64(data.count)), "page": 1, "per_page": .integer(Int64(max(data.count, 1))),
                "data": .array(data),
            ]
            return JSONResponse.make(list, contentType: VimeoMediaType.version)
        }
    }

    /// `GET /videos/ID/watch`: a minimal page standing in for vimeo.com's, so `link` leads somewhere.
    static func registerWatchPage(on router: Router<SandboxRequestContext>, vimeo: VimeoState) {
        router.get("videos/:id/watch") { _, context in
            let id = try context.parameters.require("id")
            guard let video = await vimeo.video(id) else { throw APIError.notFound("video") }
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
