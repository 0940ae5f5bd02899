import Foundation
import NIOHTTP1
import StageKit
import TestSupport
import Testing

@testable import Sandbox

@Suite("tus approach")
struct TusUploadTests {
    static let mebibyte = 1 << 20

    @Test("a 5 MiB file in 1 MiB tus PATCHes: offsets, checksum, digest, status, idempotency, quota")
    func tusUploadEndToEnd() async throws {
        try await withSandbox { _, client in
            let file = Fixture.bytes(5 * Self.mebibyte)
            let quotaBefore = try await client.send(.GET, "/me?fields=upload_quota").json
            let maxQuota = try #require(quotaBefore?.value(at: "upload_quota.space.max")?.integerValue)
            #expect(quotaBefore?.value(at: "upload_quota.space.free")?.integerValue == maxQuota)
            #expect(quotaBefore?["uri"] == nil, "fields=upload_quota keeps only that field")

            let created = try await client.createVideo(approach: "tus", size: file.count, idempotencyKey: "clip-1")
            #expect(created.status == 200)
            let video = try #require(created.json)
            let id = Fixture.videoID(video)
            let link = try #require(video.value(at: "upload.upload_link")?.stringValue)
            #expect(video.value(at: "upload.approach") == "tus")
            #expect(video.value(at: "upload.status") == "in_progress")
            #expect(video.value(at: "upload.size")?.integerValue == Int64(file.count))
            #expect(video.value(at: "transcode.status") == "in_progress")
            #expect(link.hasPrefix(client.baseURL + "/upload/\(id)?token="))

            // The same Idempotency-Key gives the same video, with the same status, and no second one.
            let replay = try await client.createVideo(approach: "tus", size: file.count, idempotencyKey: "clip-1")
            #expect(replay.status == 200)
            #expect(replay.json?["uri"] == video["uri"])
            let list = try await client.send(.GET, "/me/videos").json
            #expect(list?["total"]?.integerValue == 1)

            let quotaAfter = try await client.send(.GET, "/me?fields=upload_quota.space.free").json
            #expect(quotaAfter?.value(at: "upload_quota.space.free")?.integerValue == maxQuota - Int64(file.count))

            let options = try await client.send(.OPTIONS, link, auth: false)
            #expect(options.header("Tus-Version") == "1.0.0")
            #expect(options.header("Tus-Extension")?.contains("checksum") == true)
            #expect(options.header("Tus-Checksum-Algorithm")?.contains("sha1") == true)
            #expect(options.header("Tus-Max-Size") != nil)

            // Without Tus-Resumable: 412.
            let unversioned = try await client.send(
                .PATCH,
                link,
                headers: [("Upload-Offset", "0"), ("Content-Type", "application/offset+octet-stream")],
                body: [1, 2, 3],
                auth: false
            )
            #expect(unversioned.status == 412)
            #expect(unversioned.header("Tus-Version") == "1.0.0")

            #expect(try await client.tusOffset(link) == 0)
            let head = try await client.send(.HEAD, link, headers: [("Tus-Resumable", "1.0.0")], auth: false)
            #expect(head.header("Upload-Length") == String(file.count))
            #expect(head.header("Cache-Control") == "no-store")
            #expect(head.header("Upload-Expires")?.hasSuffix(" GMT") == true)

            var offset = 0
            for index in 0..<5 {
                let chunk = file[offset..<(offset + Self.mebibyte)]
                if index == 1 {
                    // A wrong checksum: 460, and the chunk is discarded.
                    let corrupt = try await client.tusPatch(
                        link, offset: offset, bytes: chunk, checksum: "sha1 " + Fixture.sha1Base64([0]))
                    #expect(corrupt.status == 460)
                    #expect(try await client.tusOffset(link) == offset)
                    // A wrong offset: 409.
                    let conflict = try await client.tusPatch(link, offset: offset + 1, bytes: chunk)
                    #expect(conflict.status == 409)
                }
                let patched = try await client.tusPatch(
                    link, offset: offset, bytes: chunk, checksum: "sha1 " + Fixture.sha1Base64(chunk))
                #expect(patched.status == 204)
                #expect(patched.header("Tus-Resumable") == "1.0.0")
                offset += chunk.count
                #expect(patched.header("Upload-Offset") == String(offset))
                #expect(try await client.tusOffset(link) == offset)
            }

            #expect(try await client.storedSHA256(video: id) == Fixture.sha256Hex(file))
            let uploaded = try await client.send(.GET, "/videos/\(id)?fields=upload.status,transcode.status").json
            #expect(uploaded?.value(at: "upload.status") == "complete")
            #expect(uploaded?["name"] == nil)
            // Transcoding "finishes" the configured delay (200 ms) after the upload completed.
            try await waitUntil("video \(id) is transcoded") {
                let current = try await client.send(.GET, "/videos/\(id)?fields=transcode.status").json
                return current?.value(at: "transcode.status") == "complete"
            }
            let transcoded = try await client.send(.GET, "/videos/\(id)?fields=transcode.status,status").json
            #expect(transcoded?.value(at: "transcode.status") == "complete")
            #expect(transcoded?["status"] == "available")

            // Deleting the video frees its quota and its upload.
            #expect(try await client.send(.DELETE, "/videos/\(id)").status == 204)
            let quotaFreed = try await client.send(.GET, "/me?fields=upload_quota").json
            #expect(quotaFreed?.value(at: "upload_quota.space.free")?.integerValue == maxQuota)
            #expect(try await client.send(.GET, "/videos/\(id)").status == 404)
            let gone = try await client.send(.HEAD, link, headers: [("Tus-Resumable", "1.0.0")], auth: false)
            #expect(gone.status == 404)
        }
    }

    @Test("tus creation-with-upload and termination on the standalone endpoint")
    func standaloneEndpoint() async throws {
        try await withSandbox { _, client in
            let file = Fixture.bytes(300_000)
            let created = try await client.send(
                .POST,
                "/upload",
                headers: [
                    ("Tus-Resumable", "1.0.0"), ("Upload-Length", String(file.count)),
                    ("Upload-Metadata", "filename c2FtcGxlLmJpbg=="),
                    ("Content-Type", "application/offset+octet-stream"),
                ],
                body: Array(file[0..<100_000]),
                auth: false
            )
            #expect(created.status == 201)
            #expect(created.header("Upload-Offset") == "100000")
            let location = try #require(created.header("Location"))
            let head = try await client.send(.HEAD, location, headers: [("Tus-Resumable", "1.0.0")], auth: false)
            #expect(head.header("Upload-Metadata") == "filename c2FtcGxlLmJpbg==")

            // Termination.
            let terminated = try await client.send(
                .DELETE, location, headers: [("Tus-Resumable", "1.0.0")], auth: false)
            #expect(terminated.status == 204)
            #expect(
                try await client.send(.HEAD, location, headers: [("Tus-Resumable", "1.0.0")], auth: false).status == 404
            )
        }
    }

    @Test("tus expiration: an incomplete upload answers 410 once Upload-Expires has passed")
    func expiration() async throws {
        try await withSandbox(SandboxConfiguration(uploadLifetime: .milliseconds(300))) { _, client in
            let created = try await client.send(
                .POST,
                "/upload",
                headers: [("Tus-Resumable", "1.0.0"), ("Upload-Length", "10")],
                auth: false
            )
            #expect(created.status == 201)
            #expect(created.header("Upload-Expires")?.hasSuffix(" GMT") == true)
            let location = try #require(created.header("Location"))
            // Until its 300 ms lifetime has passed, HEAD answers 200; then the upload is gone.
            try await waitUntil("the upload's lifetime has passed") {
                try await client.send(.HEAD, location, headers: [("Tus-Resumable", "1.0.0")], auth: false).status != 200
            }
            let expired = try await client.tusPatch(location, offset: 0, bytes: [0, 1, 2][...])
            #expect(expired.status == 410)
            let head = try await client.send(.HEAD, location, headers: [("Tus-Resumable", "1.0.0")], auth: false)
            #expect(head.status == 410)
        }
    }
}
