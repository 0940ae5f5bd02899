import NIOHTTP1
import StageKit

@testable import Sandbox

/// What the tests wait for with `waitUntil`: states of the sandbox that a client can observe.
extension SandboxClient {
    /// Upload body bytes (tus `PATCH`, streaming `PUT`) the sandbox has read so far, bodies that were cut
    /// included (`bytesReceived` of `GET /sandbox/stats`).
    func bodyBytesReceived() async throws -> Int64 {
        let stats = try await self.send(.GET, "/sandbox/stats", auth: false).json
        return stats?["bytesReceived"]?.integerValue ?? 0
    }

    /// Whether a request holds the write lease on the tus upload at `link` right now.
    ///
    /// Probes with a `PATCH` without a body at `Upload-Offset: length`, an offset that an incomplete
    /// upload cannot have: the sandbox answers 423 Locked while another request writes to the upload,
    /// and 409 Conflict (writing nothing) once the lease is free.
    func tusUploadIsLocked(_ link: String, length: Int) async throws -> Bool {
        try await self.tusPatch(link, offset: length, bytes: ArraySlice<UInt8>()).status == 423
    }
}
