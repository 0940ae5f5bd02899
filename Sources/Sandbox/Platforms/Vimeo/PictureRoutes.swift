import Foundation
import Hummingbird
import StageKit

/// A video's pictures (thumbnails), as Vimeo documents the upload: `POST /videos/ID/pictures` creates one
/// and answers its `link`; the image is `PUT` to the link (no token: the link is the capability);
/// `PATCH /videos/ID/pictures/PID` with `{"active": true}` makes it the video's picture.
enum PictureRoutes {
    /// The largest image taken.
    static let maxImage = 10 << 20

    static func register(
        api: RouterGroup<SandboxRequestContext>, uploads: RouterGroup<SandboxRequestContext>, vimeo: VimeoState
    ) {
        self.registerPictures(on: api, vimeo: vimeo)
        self.registerImageUpload(on: uploads, vimeo: vimeo)
    }

    /// Creating, listing and activating a video's pictures.
    private static func registerPictures(on api: RouterGroup<SandboxRequestContext>, vimeo: VimeoState) {
        api.post("videos/:id/pictures") { request, context in
            let videoID = try context.parameters.require("id")
            var request = request
            let body = (request.contentLength ?? 0) == 0 ? [:] : try await JSONResponse.readObject(&request)
            for key in body.keys.sorted() where !["active", "time"].contains(key) {
                throw APIError.invalidParameter(key, "`\(key)` is not a field this endpoint accepts.")
            }
            let picture = try await vimeo.createPicture(videoID: videoID)
            return JSONResponse.make(
                await vimeo.render(picture), status: .created,
                contentType: VimeoMediaType.picture)
        }

        api.get("videos/:id/pictures") { _, context in
            let videoID = try context.parameters.require("id")
            guard await vimeo.video(videoID) != nil else { throw APIError.notFound("video") }
            var data: [JSONValue] = []
            for picture in await vimeo.pictures(of: videoID) {
                data.append(await vimeo.render(picture))
            }
            return JSONResponse.make(
                ["total": .integer(Int64(data.count)), "data": .array(data)],
                contentType: VimeoMediaType.picture)
        }

        api.patch("videos/:id/pictures/:picture") { request, context in
            let videoID = try context.parameters.require("id")
            let pictureID = try context.parameters.require("picture")
            var request = request
            let body = try await JSONResponse.readObject(&request)
            for key in body.keys.sorted() where key != "active" {
                throw APIError.invalidParameter(key, "`\(key)` is not a field this endpoint accepts.")
            }
            guard case .bool(let active) = body["active"] else {
                throw APIError.invalidParameter("active", "`active` must be true or false.")
            }
            let picture = try await vimeo.setActive(active, pictureID: pictureID, videoID: videoID)
            return JSONResponse.make(
                await vimeo.render(picture), contentType: VimeoMediaType.picture)
        }
    }

    /// `PUT` of a picture's image to its `link`.
    private static func registerImageUpload(on uploads: RouterGroup<SandboxRequestContext>, vimeo: VimeoState) {
        uploads.put("pictures/:picture") { request, context in
            var request = request
            let pictureID = try context.parameters.require("picture")
            let contentType = request.headers[.contentType] ?? ""
            let image: ByteBuffer
            do {
                image = try await request.collectBody(upTo: Self.maxImage)
            } catch {
                throw APIError.malformedBody("The image is larger than \(Self.maxImage) bytes.")
            }
            let bytes = Data(image.readableBytesView)
            guard Self.isImage(bytes) else {
                throw APIError.invalidParameter("image", "The body is not a JPEG or PNG image.")
            }
            try await vimeo.storeImage(
                bytes, contentType: contentType, pictureID: pictureID, token: request.query("token"))
            return JSONResponse.empty(.ok)
        }
    }

    /// Whether the bytes start like a JPEG or a PNG.
    static func isImage(_ bytes: Data) -> Bool {
        bytes.starts(with: [0xFF, 0xD8, 0xFF]) || bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }
}
