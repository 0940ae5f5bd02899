import Foundation
import Hummingbird
import StageKit

/// The sandbox's own endpoints, for tests and people (no auth, no injected faults):
/// `GET /sandbox/uploads/ID/sha256`, `GET /sandbox/stats`, `GET`/`POST /sandbox/faults`. Each platform adds
/// its own (`/sandbox/videos/…`, `/sandbox/aliyun`).
enum SandboxAdminRoutes {
    static func register(on router: Router<SandboxRequestContext>, platforms: SandboxPlatforms) {
        let core = platforms.core
        router.get("sandbox/uploads/:id/sha256") { _, context in
            JSONResponse.text(try await core.uploads.storedSHA256(try context.parameters.require("id")))
        }

        router.get("sandbox/stats") { _, _ in
            var stats = await platforms.counts()
            let traffic = core.stats.snapshot
            stats["bytesReceived"] = .integer(traffic.bodyBytes)
            stats["requests"] = .integer(traffic.requests)
            stats["injectedErrors"] = .integer(traffic.injectedErrors)
            stats["droppedConnections"] = .integer(traffic.droppedConnections)
            return JSONResponse.make(.object(stats))
        }

        router.get("sandbox/faults") { _, _ in
            try self.faultsResponse(core.faults.faults)
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
            core.faults.replace(faults)
            await core.tokens.resetClocks()
            return try self.faultsResponse(faults)
        }
    }

    private static func faultsResponse(_ faults: SandboxFaults) throws -> Response {
        let data = try JSONEncoder().encode(faults)
        return JSONResponse.make(JSONValue.parse(data) ?? .null)
    }
}
