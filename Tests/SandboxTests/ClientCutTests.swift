import NIOHTTP1
import StageKit
import TestSupport
import Testing

@testable import Sandbox

@Suite("client going away")
struct ClientCutTests {
    @Test("a PATCH body cut off by the client keeps the bytes that arrived")
    func clientCutsPatch() async throws {
        try await withSandbox { sandbox, client in
            let file = Fixture.bytes(1 << 20, seed: 12)
            let video = try #require(try await client.createVideo(approach: "tus", size: file.count).json)
            let link = try #require(video.value(at: "upload.upload_link")?.stringValue)
            let target = String(link.dropFirst(sandbox.baseURL.count))
            let head =
                "PATCH \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(sandbox.port)\r\nTus-Resumable: 1.0.0\r\n"
                + "Upload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\n"
                + "Content-Length: \(file.count)\r\n\r\n"
            try await RawExchange.sendThenClose(port: sandbox.port, bytes: Array(head.utf8) + file[0..<200_000])

            // The cut request holds the upload's write lease from before its first byte is read until it
            // has stored what arrived: once the sandbox has read the 200000 bytes and the lease is free,
            // the offset is final.
            try await waitUntil("the sandbox has read the 200000 bytes sent before the cut") {
                try await client.bodyBytesReceived() >= 200_000
            }
            try await waitUntil("the cut PATCH has given the upload back") {
                try await !client.tusUploadIsLocked(link, length: file.count)
            }
            #expect(try await client.tusOffset(link) == 200_000)
            let rest = try await client.tusPatch(link, offset: 200_000, bytes: file[200_000...])
            #expect(rest.status == 204)
            #expect(try await client.storedSHA256(video: Fixture.videoID(video)) == Fixture.sha256Hex(file))
        }
    }
}
