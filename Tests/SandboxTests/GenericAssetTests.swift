import NIOHTTP1
import StageKit
import Testing

@testable import Sandbox

@Suite("generic asset API")
struct GenericAssetTests {
    @Test("create (idempotent), resumable PUT, complete with SHA-256, patch, get, delete")
    func assetLifecycle() async throws {
        try await withSandbox { _, client in
            let file = Fixture.bytes(1_500_000, seed: 21)
            let create: JSONValue = ["name": "clip.mp4", "size": .integer(Int64(file.count))]
            let created = try await client.send(
                .POST, "/generic/assets", json: create, headers: [("Idempotency-Key", "a-1")])
            #expect(created.status == 201)
            let asset = try #require(created.json)
            #expect(asset["status"] == "created")
            let id = try #require(asset["id"]?.stringValue)
            let uploadURL = try #require(asset["upload_url"]?.stringValue)
            #expect(uploadURL == "\(client.baseURL)/generic/assets/\(id)/content")

            let again = try await client.send(
                .POST, "/generic/assets", json: create, headers: [("Idempotency-Key", "a-1")])
            #expect(again.json?["id"]?.stringValue == id)

            let half = 700_000
            let first = try await client.send(
                .PUT,
                uploadURL,
                headers: [("Content-Range", "bytes 0-\(half - 1)/\(file.count)")],
                body: Array(file[0..<half]),
                auth: false
            )
            #expect(first.status == 308)
            #expect(first.header("Range") == "bytes=0-\(half - 1)")

            let early = try await client.send(.POST, "/generic/assets/\(id)/complete")
            #expect(early.status == 409)

            let second = try await client.send(
                .PUT,
                uploadURL,
                headers: [("Content-Range", "bytes \(half)-\(file.count - 1)/\(file.count)")],
                body: Array(file[half...]),
                auth: false
            )
            #expect(second.status == 200)

            let completed = try await client.send(.POST, "/generic/assets/\(id)/complete")
            #expect(completed.status == 200)
            #expect(completed.json?["status"] == "ready")
            #expect(completed.json?["sha256"]?.stringValue == Fixture.sha256Hex(file))
            #expect(completed.json?["size"]?.integerValue == Int64(file.count))

            let patched = try await client.send(
                .PATCH, "/generic/assets/\(id)", json: ["title": "Clip", "tags": ["a", "b"]])
            #expect(patched.status == 200)
            #expect(patched.json?["title"] == "Clip")
            #expect(patched.json?["tags"] == ["a", "b"])
            let unknown = try await client.send(.PATCH, "/generic/assets/\(id)", json: ["colour": "red"])
            #expect(unknown.status == 400)

            #expect(try await client.send(.GET, "/generic/assets/\(id)").json?["title"] == "Clip")
            #expect(try await client.send(.GET, "/generic/assets/\(id)", auth: false).status == 401)
            #expect(try await client.send(.DELETE, "/generic/assets/\(id)").status == 204)
            #expect(try await client.send(.GET, "/generic/assets/\(id)").status == 404)
        }
    }
}
