import Foundation
import Hummingbird
import StageKit

/// The sandbox's own endpoints, for tests and people (no auth, no injected faults):
/// `GET /sandbox/videos/ID/sha256`, `GET /sandbox/uploads/ID/sha256`, `GET /sandbox/pictures/ID/sha256`,
/// `GET /sandbox/stats`,
/// `GET`/`POST /sandbox/faults`.
enum SandboxAdminRoutes {
    static func register(on router: Router<SandboxRequestContext>, services: SandboxServices) {
        router.get("sandbox/videos/:id/sha256") { _, context in
            let id = try context.parameters.require("id")
            let uploadID = await services.state.video(id)?.uploadID ?? id
            return try await self.digest(uploadID: uploadID, services: services)
        }

        router.get("sandbox/uploads/:id/sha256") { _, context in
            try await self.digest(uploadID: try context.parameters.require("id"), services: services)
        }

        router.get("sandbox/pictures/:id/sha256") { _, context in
            let id = try context.parameters.require("id")
            guard let bytes = await services.state.picture(id)?.bytes else { throw APIError.notFound("image") }
            return JSONResponse.text(
                try await FileDigest.sha256Hex(path: services.state.folder.picturePath(id), length: bytes))
        }

        router.get("sandbox/stats") { _, _ in
            let counts = await services.state.counts()
            let traffic = services.stats.snapshot
            let stats: JSONValue = [
                "videos": .integer(Int64(counts.videos)),
                "assets": .integer(Int64(counts.assets)),
                "uploads": .integer(Int64(counts.uploads)),
                "storedBytes": .integer(counts.storedBytes),
                "bytesReceived": .integer(traffic.bodyBytes),
                "requests": .integer(traffic.requests),
                "injectedErrors": .integer(traffic.injectedErrors),
                "droppedConnections": .integer(traffic.droppedConnections),
            ]
            return JSONResponse.make(stats)
        }

        router.get("sandbox/faults") { _, _ in
            try self.faultsResponse(services.faults.faults)
        }

        router.post("sandbox/faults") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: JSONResponse.maxRequestBody)
            let faults: SandboxFaults
            do {
                faults = try JSONDecoder().decode(SandboxFaults.self, from: Data(body.readableBytesView))
            } catch {
                throw APIError.malformedBody("The faults must be a JSON object: \(error)")
            }
            services.faults.replace(faults)
            await services.state.resetTokenClocks()
            return try self.faultsResponse(faults)
        }
    }

    private static func digest(uploadID: String, services: SandboxServices) async throws -> Response {
        guard let upload = await services.state.anyUpload(uploadID) else { throw APIError.notFound("upload") }
        let digest = try await FileDigest.sha256Hex(
            path: services.state.folder.uploadPath(uploadID),
            length: upload.offset
        )
        return JSONResponse.text(digest)
    }

    private static func faultsResponse(_ faults: SandboxFaults) throws -> Response {
        let data = try JSONEncoder().encode(faults)
        return JSONResponse.make(JSONValue.parse(data) ?? .null)
    }
}
