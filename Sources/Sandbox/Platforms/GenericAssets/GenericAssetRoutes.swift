import Foundation
import Hummingbird
import StageKit

/// A small generic REST API standing in for "another platform", for workflows built from
/// `http.request` and `http.upload` stages: create an asset, upload its bytes with the resumable
/// `PUT` protocol, complete it, patch its metadata.
///
/// All routes need the bearer token except the content `PUT`, whose `upload_url` works like a
/// presigned URL (the random asset id is the capability), as Vimeo's `upload_link` does.
enum GenericAssetRoutes {
    static func register(
        api: RouterGroup<SandboxRequestContext>,
        uploads: RouterGroup<SandboxRequestContext>,
        assets: GenericAssetState
    ) {
        registerCollection(on: api, assets: assets)
        registerAsset(on: api, assets: assets)
        registerCompletion(api: api, uploads: uploads, assets: assets)
    }

    /// Creating and listing assets.
    private static func registerCollection(on api: RouterGroup<SandboxRequestContext>, assets: GenericAssetState) {
        api.post("generic/assets") { request, _ in
            var request = request
            let body = try await JSONResponse.readObject(&request)
            for key in body.keys.sorted() where !["name", "size"].contains(key) {
                throw APIError.invalidParameter(key, "`\(key)` is not a field this endpoint accepts.")
            }
            guard let name = body["name"]?.stringValue, !name.isEmpty else {
                throw APIError.invalidParameter("name", "`name` is required.")
            }
            guard let size = body["size"]?.integerValue, size >= 0 else {
                throw APIError.invalidParameter("size", "`size` must be a non-negative number of bytes.")
            }
            let (asset, _) = await assets.createAsset(
                name: name, size: size, idempotencyKey: request.idempotencyKey(honouredBy: assets.core.faults))
            try await assets.core.faults.delayCreateAnswer()
            return JSONResponse.make(await assets.render(asset), status: .created)
        }

        // The assets, newest first, optionally only those named `name` (a search, so a new asset shows up
        // after the fault set's `listingLag`).
        api.get("generic/assets") { request, _ in
            let name = request.query("name")
            let indexedBefore = Date().addingTimeInterval(-assets.core.faults.faults.listingLag)
            var data: [JSONValue] = []
            for asset in await assets.assets()
            where name.map({ asset.name == $0 && asset.createdAt <= indexedBefore }) ?? true {
                data.append(await assets.render(asset))
            }
            return JSONResponse.make(["total": .integer(Int64(data.count)), "data": .array(data)])
        }
    }

    /// Reading, patching and deleting one asset.
    private static func registerAsset(on api: RouterGroup<SandboxRequestContext>, assets: GenericAssetState) {
        api.get("generic/assets/:id") { _, context in
            let id = try context.parameters.require("id")
            guard let asset = await assets.asset(id) else { throw APIError.notFound("asset") }
            return JSONResponse.make(await assets.render(asset))
        }

        api.patch("generic/assets/:id") { request, context in
            let id = try context.parameters.require("id")
            var request = request
            let body = try await JSONResponse.readObject(&request)
            guard await assets.asset(id) != nil else { throw APIError.notFound("asset") }
            for key in body.keys.sorted() where !["title", "tags"].contains(key) {
                throw APIError.invalidParameter(key, "`\(key)` is not a field this endpoint accepts.")
            }
            var title: String??
            if let value = body["title"] {
                switch value {
                case .null: title = .some(nil)
                case .string(let text): title = .some(text)
                default: throw APIError.invalidParameter("title", "`title` must be a string.")
                }
            }
            var tags: [String]?
            if let value = body["tags"] {
                guard let elements = value.arrayValue else {
                    throw APIError.invalidParameter("tags", "`tags` must be an array of strings.")
                }
                tags = try elements.enumerated().map { index, element in
                    guard let text = element.stringValue ?? element["name"]?.stringValue else {
                        throw APIError.invalidParameter("tags[\(index)]", "Each tag must be a string.")
                    }
                    return text
                }
            }
            let asset = try await assets.updateAsset(id, title: title, tags: tags)
            return JSONResponse.make(await assets.render(asset))
        }

        api.delete("generic/assets/:id") { _, context in
            let id = try context.parameters.require("id")
            guard await assets.deleteAsset(id) else { throw APIError.notFound("asset") }
            return JSONResponse.empty(.noContent)
        }
    }

    /// Uploading an asset's bytes and completing it.
    private static func registerCompletion(
        api: RouterGroup<SandboxRequestContext>, uploads: RouterGroup<SandboxRequestContext>,
        assets: GenericAssetState
    ) {
        api.post("generic/assets/:id/complete") { _, context in
            let id = try context.parameters.require("id")
            guard let asset = await assets.asset(id) else { throw APIError.notFound("asset") }
            if asset.status != "ready" {
                let stored = await assets.core.uploads.record(asset.uploadID)?.offset ?? 0
                guard stored >= asset.size else {
                    throw APIError(
                        status: .conflict,
                        code: 2230,
                        message: "The asset's bytes are not all there.",
                        developerMessage: "\(stored) of \(asset.size) bytes stored; resume the upload first."
                    )
                }
                let digest = try await FileDigest.sha256Hex(
                    path: assets.core.uploads.path(of: asset.uploadID),
                    length: asset.size
                )
                _ = try await assets.markAssetReady(id, sha256: digest)
            }
            guard let ready = await assets.asset(id) else { throw APIError.notFound("asset") }
            return JSONResponse.make([
                "id": .string(ready.id),
                "status": .string(ready.status),
                "size": .integer(ready.size),
                "sha256": .optional(ready.sha256),
            ])
        }

        uploads.put("generic/assets/:id/content") { request, context in
            let id = try context.parameters.require("id")
            guard let asset = await assets.asset(id) else { throw APIError.notFound("asset") }
            return try await StreamingUpload(core: assets.core).put(
                request,
                context: context,
                uploadID: asset.uploadID,
                token: nil
            )
        }
    }
}
