import NIOHTTP1
import StageKit
import Testing

@testable import Sandbox

@Suite("legacy streaming approach")
struct StreamingUploadTests {
    @Test("PUT in two halves with Content-Range, probe with bytes */SIZE, then DELETE complete_uri")
    func streamingUpload() async throws {
        try await withSandbox { _, client in
            let file = Fixture.bytes(3 * (1 << 20) + 7)
            let half = file.count / 2
            let created = try await client.createVideo(approach: "streaming", size: file.count)
            #expect(created.status == 200)
            let video = try #require(created.json)
            let id = Fixture.videoID(video)
            let link = try #require(video.value(at: "upload.upload_link")?.stringValue)
            let completeURI = try #require(video.value(at: "upload.complete_uri")?.stringValue)
            #expect(video.value(at: "upload.upload_link_secure")?.stringValue == link)
            #expect(completeURI.hasPrefix("/users/1/uploads/\(id)?video_file_id="))
            #expect(completeURI.contains("&signature="))

            // Nothing stored yet: 308 without Range.
            let empty = try await client.send(
                .PUT, link, headers: [("Content-Range", "bytes */\(file.count)")], body: [], auth: false)
            #expect(empty.status == 308)
            #expect(empty.header("Range") == nil)

            let first = try await client.send(
                .PUT,
                link,
                headers: [("Content-Range", "bytes 0-\(half - 1)/\(file.count)"), ("Content-Type", "video/mp4")],
                body: Array(file[0..<half]),
                auth: false
            )
            #expect(first.status == 308)
            #expect(first.header("Range") == "bytes=0-\(half - 1)")

            // Completing too early is refused with an error body.
            let early = try await client.send(.DELETE, completeURI)
            #expect(early.status == 400)
            #expect(early.json?["error_code"] != nil)

            let probe = try await client.send(
                .PUT, link, headers: [("Content-Range", "bytes */\(file.count)")], body: [], auth: false)
            #expect(probe.status == 308)
            #expect(probe.header("Range") == "bytes=0-\(half - 1)")

            // A piece that leaves a gap is refused with the Range to resume from.
            let gap = try await client.send(
                .PUT,
                link,
                headers: [("Content-Range", "bytes \(half + 10)-\(file.count - 1)/\(file.count)")],
                body: Array(file[(half + 10)...]),
                auth: false
            )
            #expect(gap.status == 416)
            #expect(gap.header("Range") == "bytes=0-\(half - 1)")

            let second = try await client.send(
                .PUT,
                link,
                headers: [("Content-Range", "bytes \(half)-\(file.count - 1)/\(file.count)")],
                body: Array(file[half...]),
                auth: false
            )
            #expect(second.status == 200)
            let inProgress = try await client.send(.GET, "/videos/\(id)?fields=upload.status").json
            #expect(inProgress?.value(at: "upload.status") == "in_progress", "streaming completes with complete_uri")

            let completed = try await client.send(.DELETE, completeURI)
            #expect(completed.status == 201)
            #expect(completed.header("Location") == "/videos/\(id)")
            let status = try await client.send(.GET, "/videos/\(id)?fields=upload.status").json
            #expect(status?.value(at: "upload.status") == "complete")
            #expect(try await client.storedSHA256(video: id) == Fixture.sha256Hex(file))

            // A wrong signature is refused.
            let forged = try await client.send(.DELETE, "/users/1/uploads/\(id)?video_file_id=1&signature=nope")
            #expect(forged.status == 400)
        }
    }

    @Test("a PUT without Content-Range is the whole file")
    func wholeFilePut() async throws {
        try await withSandbox { _, client in
            let file = Fixture.bytes(2 * (1 << 20) + 3, seed: 9)
            let video = try #require(try await client.createVideo(approach: "streaming", size: file.count).json)
            let link = try #require(video.value(at: "upload.upload_link")?.stringValue)
            let put = try await client.send(.PUT, link, headers: [("Expect", "100-continue")], body: file, auth: false)
            #expect(put.status == 200)
            let done = try await client.send(
                .PUT, link, headers: [("Content-Range", "bytes */*")], body: [], auth: false)
            #expect(done.status == 200)
            #expect(done.header("Range") == "bytes=0-\(file.count - 1)")
            #expect(try await client.storedSHA256(video: Fixture.videoID(video)) == Fixture.sha256Hex(file))
        }
    }
}
