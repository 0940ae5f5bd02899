import Hummingbird
import StageKit

/// Vimeo's API 3.4 as the sandbox serves it: every route of the platform, on the groups the router gives it.
enum VimeoRoutes {
    /// - Parameters:
    ///   - api: faults and bearer auth.
    ///   - contentUploads: faults only (a picture's link is the capability).
    ///   - router: neither (the watch page and the sandbox's inspection endpoints).
    static func register(
        api: RouterGroup<SandboxRequestContext>, contentUploads: RouterGroup<SandboxRequestContext>,
        router: Router<SandboxRequestContext>, vimeo: VimeoState
    ) {
        MeRoutes.register(on: api, vimeo: vimeo)
        VideoRoutes.register(on: api, vimeo: vimeo)
        PictureRoutes.register(api: api, uploads: contentUploads, vimeo: vimeo)
        VideoRoutes.registerWatchPage(on: router, vimeo: vimeo)
        self.registerInspection(on: router, vimeo: vimeo)
    }

    /// `GET /sandbox/videos/ID/sha256` (of the video's current file, or of the upload `ID`) and
    /// `GET /sandbox/pictures/ID/sha256`, for tests and people.
    private static func registerInspection(on router: Router<SandboxRequestContext>, vimeo: VimeoState) {
        router.get("sandbox/videos/:id/sha256") { _, context in
            let id = try context.parameters.require("id")
            let uploadID = await vimeo.video(id)?.uploadID ?? id
            return JSONResponse.text(try await vimeo.uploads.storedSHA256(uploadID))
        }

        router.get("sandbox/pictures/:id/sha256") { _, context in
            let id = try context.parameters.require("id")
            guard let bytes = await vimeo.picture(id)?.bytes else { throw APIError.notFound("image") }
            let path = vimeo.core.folder.uploadPath(VimeoFiles.picture(id))
            return JSONResponse.text(try await FileDigest.sha256Hex(path: path, length: bytes))
        }
    }
}
