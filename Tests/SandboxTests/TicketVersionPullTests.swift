import Foundation
import NIOHTTP1
import StageKit
import TestSupport
import Testing

@testable import Sandbox

/// The upload flows besides tus: the legacy streaming ticket of API 3.2/3.3, new versions of a video's
/// file, and the pull approach.
@Suite("tickets, versions and pulls")
struct TicketVersionPullTests {
    @Test("type: streaming answers a ticket; the first PUT declares the size; DELETE complete_uri makes one video")
    func legacyTicket() async throws {
        try await withSandbox { _, client in
            let file = Fixture.bytes(2 * (1 << 20) + 11)
            let half = file.count / 2
            // API 3.4 has no such request; 3.2 answers a ticket.
            let current = try await client.send(.POST, "/me/videos", json: ["type": "streaming"])
            #expect(current.status == 400 && current.text.contains("version=3.2"))
            let created = try await client.send(.POST, "/me/videos", json: ["type": "streaming"], version: "3.2")
            #expect(created.status == 201, "\(created.text)")
            let ticket = try #require(created.json)
            let ticketID = try #require(ticket["ticket_id"]?.stringValue)
            #expect(ticket["uri"]?.stringValue == "/users/1/tickets/\(ticketID)")
            #expect(ticket["user"]?["upload_quota"] != nil)
            let link = try #require(ticket["upload_link_secure"]?.stringValue)
            #expect(ticket["upload_link"]?.stringValue == link)
            let completeURI = try #require(ticket["complete_uri"]?.stringValue)
            #expect(completeURI.hasPrefix("/users/1/uploads/\(ticketID)?video_file_id="))
            // A ticket is not a video.
            #expect(try await client.send(.GET, "/me/videos").json?["total"] == 0)

            // Without a size the ticket knows nothing: `bytes */*` asks, a piece without a size is refused.
            let unknown = try await client.send(
                .PUT, link, headers: [("Content-Range", "bytes */*")], body: [], auth: false)
            #expect(unknown.status == 308 && unknown.header("Range") == nil)
            let sizeless = try await client.send(
                .PUT, link, headers: [("Content-Range", "bytes 0-\(half - 1)/*")], body: Array(file[..<half]),
                auth: false)
            #expect(sizeless.status == 411, "\(sizeless.text)")
            let first = try await client.send(
                .PUT, link, headers: [("Content-Range", "bytes 0-\(half - 1)/\(file.count)")],
                body: Array(file[..<half]), auth: false)
            #expect(first.status == 308 && first.header("Range") == "bytes=0-\(half - 1)")
            let probe = try await client.send(
                .PUT, link, headers: [("Content-Range", "bytes */*")], body: [], auth: false)
            #expect(probe.status == 308 && probe.header("Range") == "bytes=0-\(half - 1)")
            let early = try await client.send(.DELETE, completeURI)
            #expect(early.status == 400 && early.json?["error_code"] == 2230)
            let second = try await client.send(
                .PUT, link, headers: [("Content-Range", "bytes \(half)-\(file.count - 1)/\(file.count)")],
                body: Array(file[half...]), auth: false)
            #expect(second.status == 200)

            let completed = try await client.send(.DELETE, completeURI)
            #expect(completed.status == 201)
            let location = try #require(completed.header("Location"))
            #expect(location.hasPrefix("/videos/"))
            let id = String(location.dropFirst("/videos/".count))
            let video = try await client.send(.GET, location).json
            #expect(video?["upload"]?["status"] == "complete")
            #expect(video?["upload"]?["size"] == .integer(Int64(file.count)))
            #expect(try await client.storedSHA256(video: id) == Fixture.sha256Hex(file))
            // Repeated after a lost answer: the same video, still one.
            let again = try await client.send(.DELETE, completeURI)
            #expect(again.status == 201 && again.header("Location") == location)
            #expect(try await client.send(.GET, "/me/videos").json?["total"] == 1)
            let forged = try await client.send(.DELETE, "/users/1/uploads/\(ticketID)?video_file_id=1&signature=x")
            #expect(forged.status == 400)
        }
    }

    @Test("a whole-file PUT without Content-Range declares the size by its Content-Length")
    func legacyTicketWholeFile() async throws {
        try await withSandbox { _, client in
            let file = Fixture.bytes(300_001)
            let ticket = try #require(
                try await client.send(.POST, "/me/videos", json: ["type": "streaming"], version: "3.3").json)
            let link = try #require(ticket["upload_link_secure"]?.stringValue)
            let put = try await client.send(
                .PUT, link, headers: [("Content-Type", "video/mp4")], body: file, auth: false)
            #expect(put.status == 200, "\(put.text)")
            let completed = try await client.send(.DELETE, try #require(ticket["complete_uri"]?.stringValue))
            let id = String(try #require(completed.header("Location")).dropFirst("/videos/".count))
            #expect(try await client.storedSHA256(video: id) == Fixture.sha256Hex(file))
            let unknownField = try await client.send(
                .POST, "/me/videos", json: ["type": "streaming", "size": 3], version: "3.2")
            #expect(unknownField.status == 400 && unknownField.text.contains("size"))

            // A video made from a ticket goes with its ticket: complete_uri no longer finds it.
            #expect(try await client.send(.DELETE, "/videos/\(id)").status == 204)
            #expect(try await client.send(.DELETE, try #require(ticket["complete_uri"]?.stringValue)).status == 404)
            // An empty file is no video.
            let empty = try #require(
                try await client.send(.POST, "/me/videos", json: ["type": "streaming"], version: "3.2").json)
            let emptyPut = try await client.send(
                .PUT, try #require(empty["upload_link_secure"]?.stringValue), body: [], auth: false)
            #expect(emptyPut.status == 400, "\(emptyPut.text)")
        }
    }

    @Test(
        "POST /videos/ID/versions: a new file for the same video, uploaded with tus; the newest complete one is active")
    func versions() async throws {
        try await withSandbox { _, client in
            let original = Fixture.bytes(200_000, seed: 1)
            let replacement = Fixture.bytes(150_000, seed: 2)
            let video = try #require(try await client.createVideo(approach: "tus", size: original.count).json)
            let id = Fixture.videoID(video)
            let link = try #require(video["upload"]?["upload_link"]?.stringValue)
            #expect(try await client.tusPatch(link, offset: 0, bytes: original[...]).status == 204)

            let missingName = try await client.send(
                .POST, "/videos/\(id)/versions", json: ["upload": ["approach": "tus", "size": 10]])
            #expect(
                missingName.status == 400
                    && missingName.json?["invalid_parameters"]?.arrayValue?.first?["field"] == "file_name")
            let streaming = try await client.send(
                .POST, "/videos/\(id)/versions",
                json: ["file_name": "b.mp4", "upload": ["approach": "streaming", "size": 10]])
            #expect(streaming.status == 400)
            let noVideo = try await client.send(
                .POST, "/videos/1/versions", json: ["file_name": "b.mp4", "upload": ["approach": "tus", "size": 10]])
            #expect(noVideo.status == 404)

            let created = try await client.send(
                .POST, "/videos/\(id)/versions",
                json: [
                    "file_name": "b.mp4", "upload": ["approach": "tus", "size": .integer(Int64(replacement.count))],
                ])
            #expect(created.status == 201, "\(created.text)")
            let version = try #require(created.json)
            #expect(version["uri"]?.stringValue?.hasPrefix("/videos/\(id)/versions/") == true)
            #expect(version["active"] == false && version["upload"]?["status"] == "in_progress")
            let versionLink = try #require(version["upload"]?["upload_link"]?.stringValue)
            #expect(versionLink != link)
            #expect(try await client.send(.GET, "/videos/\(id)").json?["upload"]?["status"] == "in_progress")
            #expect(try await client.tusPatch(versionLink, offset: 0, bytes: replacement[...]).status == 204)

            let replaced = try await client.send(.GET, "/videos/\(id)").json
            #expect(replaced?["upload"]?["status"] == "complete")
            #expect(replaced?["upload"]?["size"] == .integer(Int64(replacement.count)))
            #expect(try await client.storedSHA256(video: id) == Fixture.sha256Hex(replacement))
            let listed = try await client.send(.GET, "/videos/\(id)/versions").json
            let versions = listed?["data"]?.arrayValue ?? []
            #expect(versions.map { $0["active"] } == [true, false], "\(versions)")
            #expect(versions.first?["file_name"] == "b.mp4")
            #expect(try await client.send(.GET, "/me/videos").json?["total"] == 1)
        }
    }

    @Test("pull: the sandbox fetches upload.link; a link that fails or a wrong size is upload.status error")
    func pull() async throws {
        try await withSandbox { sandbox, client in
            // Any HTTP resource will do as the file: here, a video's watch page.
            let source = Fixture.videoID(try await client.createVideo(approach: "tus", size: 10).json)
            let page = try await client.send(.GET, "/videos/\(source)/watch", auth: false).body
            let link = "\(sandbox.baseURL)/videos/\(source)/watch"
            let created = try await client.send(
                .POST, "/me/videos", json: ["upload": ["approach": "pull", "link": .string(link)]])
            #expect(created.status == 200, "\(created.text)")
            let video = try #require(created.json)
            #expect(video["upload"]?["approach"] == "pull" && video["upload"]?["link"] == .string(link))
            #expect(video["upload"]?["upload_link"] == .null)
            let id = Fixture.videoID(video)
            try await waitUntil("the pull of \(link) completes") {
                (try? await client.send(.GET, "/videos/\(id)").json?["upload"]?["status"]) == "complete"
            }
            #expect(try await client.storedSHA256(video: id) == Fixture.sha256Hex(page))
            #expect(
                try await client.send(.GET, "/videos/\(id)").json?["upload"]?["size"] == .integer(Int64(page.count)))

            for (upload, why) in [
                (["approach": "pull", "link": .string("\(sandbox.baseURL)/videos/1/watch")] as JSONValue, "a 404"),
                (["approach": "pull", "link": .string(link), "size": .integer(Int64(page.count + 1))], "a wrong size"),
            ] {
                let failing = Fixture.videoID(try await client.send(.POST, "/me/videos", json: ["upload": upload]).json)
                try await waitUntil("the pull with \(why) fails") {
                    (try? await client.send(.GET, "/videos/\(failing)").json?["upload"]?["status"]) == "error"
                }
                #expect(try await client.send(.GET, "/videos/\(failing)").json?["status"] == "uploading_error")
            }
            let noLink = try await client.send(.POST, "/me/videos", json: ["upload": ["approach": "pull"]])
            #expect(
                noLink.status == 400 && noLink.json?["invalid_parameters"]?.arrayValue?.first?["field"] == "upload.link"
            )
        }
    }
}
