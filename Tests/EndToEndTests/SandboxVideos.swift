import Foundation
import Sandbox
import StageKit
import TestSupport

extension RunningSandbox {
    /// Every video on the sandbox (`GET /me/videos`, newest first), asked with `token`.
    func videos(token: String) async throws -> [JSONValue] {
        let text = await httpGet("\(baseURL)/me/videos?per_page=100", bearer: token)
        return try JSONValue(parsing: text)["data"]?.arrayValue ?? []
    }

    /// The SHA-256 of the bytes the sandbox holds for a video (from its JSON).
    func storedSHA256(of video: JSONValue) async -> String {
        let id = video["uri"]?.stringValue?.split(separator: "/").last.map(String.init) ?? ""
        return await httpGet("\(baseURL)/sandbox/videos/\(id)/sha256").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
