import Foundation
import StageKit
import TestSupport
import Testing

@testable import UploadStages

/// `s3.uploadFolder` against moto's S3 server: a package's files, their content types, and manifests last.
@Suite struct S3FolderUploadTests {
    /// A package as `ffmpeg.package` lays it out, with random bytes for the segments, and a hidden work folder.
    private func packageFolder() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("folder-\(UUID().uuidString)")
        var files = [
            "master.m3u8": 200, "manifest.mpd": 300, ".work/720p.mp4": 1000, ".master.m3u8.partial": 10,
        ]
        for rendition in ["720p", "360p", "audio"] {
            files["\(rendition)/index.m3u8"] = 150
            files["\(rendition)/init.mp4"] = 700
            for segment in 0..<3 { files["\(rendition)/seg_0000\(segment).m4s"] = 20_000 + segment }
        }
        for (name, size) in files {
            let url = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let random = try randomFile(bytes: size, seed: UInt64(name.utf8.reduce(0) { $0 &* 31 &+ Int($1) } & 0xFFFF))
            try FileManager.default.moveItem(at: random, to: url)
        }
        return root
    }

    private func options(_ server: PeerServer, _ folder: URL) -> JSONValue {
        [
            "endpoint": .string("http://127.0.0.1:\(server.port)"), "bucket": "media", "prefix": "videos/clip/",
            "folder": .string(folder.path), "concurrency": 4, "accessKeyId": "test", "secretAccessKey": "test",
        ]
    }

    /// The CompleteMultipartUpload requests moto answered: (start, end, key).
    private func completions(_ server: PeerServer) async throws -> [(start: Double, end: Double, key: String)] {
        let timeline = try JSONValue(parsing: await httpGet("http://127.0.0.1:\(server.port)/__timeline"))
        return (timeline["completed"]?.arrayValue ?? []).compactMap { entry in
            guard let values = entry.arrayValue, values.count == 3, let path = values[2].stringValue else { return nil }
            let number = { (value: JSONValue) in value.doubleValue ?? Double(value.intValue ?? 0) }
            return (number(values[0]), number(values[1]), String(path.dropFirst("/media/".count)))
        }
    }

    @Test func uploadsEveryFileWithItsTypeAndTheManifestsLast() async throws {
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let folder = try packageFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let harness = StageHarness(
            stateFolder: FileManager.default.temporaryDirectory.appendingPathComponent("s3f-\(UUID().uuidString)"))
        let run = await harness.run(S3FolderUploadStage.self, options: options(server, folder))
        let outputs = try run.outputs.get()
        #expect(outputs["files"] == 17)
        #expect(outputs["manifests"] == ["videos/clip/manifest.mpd", "videos/clip/master.m3u8"])
        #expect(outputs["location"]?.stringValue?.hasSuffix("/media/videos/clip/master.m3u8") == true)

        let done = try await completions(server)
        #expect(done.count == 17)
        #expect(!done.contains { $0.key.contains(".work") || $0.key.contains(".partial") })
        for file in ["720p/seg_00002.m4s", "audio/init.mp4", "master.m3u8"] {
            #expect(
                await peerTool("s3_tool.py", [String(server.port), "sha256", "media", "videos/clip/\(file)"])
                    == (await sha256sum(folder.appendingPathComponent(file).path)))
        }
        // Every manifest starts only once every file it may list is complete on the server.
        func ended(_ keys: [(start: Double, end: Double, key: String)]) -> Double { keys.map(\.end).max() ?? 0 }
        let top = done.filter { !$0.key.dropFirst("videos/clip/".count).contains("/") }
        let playlists = done.filter { $0.key.hasSuffix(".m3u8") && !top.map(\.key).contains($0.key) }
        let media = done.filter { !$0.key.hasSuffix(".m3u8") && !$0.key.hasSuffix(".mpd") }
        #expect(top.count == 2 && playlists.count == 3 && media.count == 12)
        #expect(playlists.allSatisfy { $0.start >= ended(media) })
        #expect(top.allSatisfy { $0.start >= ended(playlists) })

        // Objects stored by one PUT are private: their types are read as their owner.
        let keys = ["master.m3u8", "720p/seg_00000.m4s", "720p/init.mp4", "manifest.mpd"].map { "videos/clip/\($0)" }
        let types = await peerTool("s3_tool.py", [String(server.port), "types", "media"] + keys)
            .split(separator: "\n").map(String.init)
        #expect(types == ["application/vnd.apple.mpegurl", "video/iso.segment", "video/mp4", "application/dash+xml"])

        // Run again from the checkpoint: nothing is sent a second time.
        let received = try JSONValue(parsing: await httpGet("http://127.0.0.1:\(server.port)/__stats"))["received"]
        let again = await harness.run(
            S3FolderUploadStage.self, options: options(server, folder), checkpoint: run.checkpoint)
        #expect(try again.outputs.get()["files"] == 17)
        #expect(try await completions(server).count == 17)
        #expect(
            try JSONValue(parsing: await httpGet("http://127.0.0.1:\(server.port)/__stats"))["received"] == received)
    }

    @Test func filesGoInWavesMediaThenPlaylistsThenTopLevelManifests() {
        let files = ["a/index.m3u8", "a/init.mp4", "a/seg_00000.m4s", "manifest.mpd", "master.m3u8", "poster.jpg"]
        #expect(
            FolderFiles.waves(files) == [
                ["a/init.mp4", "a/seg_00000.m4s", "poster.jpg"], ["a/index.m3u8"], ["manifest.mpd", "master.m3u8"],
            ])
        #expect(FolderFiles.waves(["a.bin"]) == [["a.bin"]])
    }
}
