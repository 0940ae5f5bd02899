import Foundation
import NIOHTTP1
import StageKit
import Testing

@testable import Sandbox

@Suite("pictures and listings")
struct PictureAndListingTests {
    @Test("a picture gets its image by PUT to its link, then PATCH makes it the video's active one")
    func pictureLifecycle() async throws {
        try await withSandbox { _, client in
            let created = try await client.send(
                .POST, "/me/videos", json: ["name": "clip", "upload": ["approach": "tus", "size": 1000]])
            let video = try #require(created.json?["uri"]?.stringValue)
            let picture = try #require(try await client.send(.POST, "\(video)/pictures", json: [:]).json)
            let uri = try #require(picture["uri"]?.stringValue)
            let link = try #require(picture["link"]?.stringValue)
            #expect(picture["active"] == false)

            // Active before its image arrived, or an image that is not one: refused, naming the field.
            let early = try await client.send(.PATCH, uri, json: ["active": true])
            #expect(early.status == 400)
            let text = try await client.send(.PUT, link, body: Array("not an image".utf8), auth: false)
            #expect(text.status == 400)

            let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 7, count: 500)
            let put = try await client.send(
                .PUT, link, headers: [("Content-Type", "image/jpeg")], body: jpeg, auth: false)
            #expect(put.status == 200)
            let wrongToken = try await client.send(
                .PUT, link.replacingOccurrences(of: "token=", with: "token=x"), body: jpeg, auth: false)
            #expect(wrongToken.status == 404)

            let active = try await client.send(.PATCH, uri, json: ["active": true])
            #expect(active.json?["active"] == true)
            let shown = try await client.send(.GET, video)
            #expect(shown.json?["pictures"]?["uri"]?.stringValue == uri)
            let list = try await client.send(.GET, "\(video)/pictures")
            #expect(list.json?["total"] == 1)
        }
    }

    @Test("GET /me/videos finds videos by words of their name or description, sorted and directed as asked")
    func listingQuery() async throws {
        try await withSandbox { _, client in
            for (name, description) in [("alpha", "first marker-1"), ("beta", "second"), ("gamma", "marker-1 too")] {
                _ = try await client.send(
                    .POST, "/me/videos",
                    json: [
                        "name": .string(name), "description": .string(description),
                        "upload": ["approach": "tus", "size": 10],
                    ])
            }
            let found = try await client.send(.GET, "/me/videos?query=marker-1&sort=alphabetical&direction=desc")
            #expect(found.json?["data"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["gamma", "alpha"])
            #expect(found.json?["total"] == 2)
            let bad = try await client.send(.GET, "/me/videos?sort=plays")
            #expect(bad.status == 400)
        }
    }
}
