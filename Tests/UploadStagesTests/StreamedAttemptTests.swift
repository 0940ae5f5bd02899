import Foundation
import StageKit
import StageRuntime
import TestSupport
import Testing

@testable import UploadStages

/// A streamed upload (`"stream": true`) whose export fails after its first bytes and is tried again (its
/// `retry`): the new attempt writes a new file, and the upload follows it instead of reading on in the earlier
/// attempt's. The same when the export writes its file again in one attempt (its index outgrew the room reserved
/// for it): the upload reads the finished file. Each file here has other bytes, so an upload that read the first
/// one would show.
@Suite struct StreamedAttemptTests {
    /// Two files of an export of `size` bytes, played on `stream`: the first attempt makes `final` bytes final
    /// and stops once `sent` says the upload has sent some of them; then a new file at the same path is written
    /// and finished, by a second attempt or, when `rewritten`, by the same one writing its file again. Returns the
    /// finished file.
    private func playAttempts(
        on stream: ExportStream, in folder: URL, size: Int, final: Int64, rewritten: Bool = false,
        sent: @escaping @Sendable () async -> Bool
    ) async throws -> String {
        let writing = folder.appendingPathComponent(".clip.mp4.partial").path
        let destination = folder.appendingPathComponent("clip.mp4").path
        let first = try randomFile(bytes: size, seed: 21)
        let second = try randomFile(bytes: size, seed: 22)
        try FileManager.default.copyItem(atPath: first.path, toPath: writing)
        stream.open(destination: destination, writing: writing, head: 4096)
        stream.advance(to: final)
        try await waitUntil("bytes of the first attempt uploaded", sent)
        try FileManager.default.removeItem(atPath: writing)
        if rewritten { stream.rewrite() }
        try FileManager.default.copyItem(atPath: second.path, toPath: writing)
        if !rewritten {
            stream.open(destination: destination, writing: writing, head: 4096)
            stream.advance(to: Int64(size))
        }
        try FileManager.default.moveItem(atPath: writing, toPath: destination)
        stream.finish(destination: destination, size: Int64(size))
        return destination
    }

    /// Starts `stage` with `options` in the background, streaming the export that `stream` announces, with its
    /// state under `folder`.
    private func following<S: Stage>(
        _ stream: ExportStream, _ stage: S.Type, options: JSONValue, in folder: URL
    ) -> Task<StageHarness.Run, Never> {
        var services = ServiceValues()
        services[ExportStreamKey.self] = stream
        let harness = StageHarness(stateFolder: folder.appendingPathComponent("state"))
        return Task { [services] in await harness.run(stage, options: options, services: services) }
    }

    private func scratchFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("attempts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test(arguments: [false, true]) func anS3UploadFollowsTheExportsNewFile(rewritten: Bool) async throws {
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stream = ExportStream()
        let options: JSONValue = [
            "endpoint": .string("http://127.0.0.1:\(server.port)"), "bucket": "media", "key": "clip.mp4",
            "file": .string(folder.appendingPathComponent("clip.mp4").path), "partSize": "5MiB",
            "checksum": "sha256", "accessKeyId": "test", "secretAccessKey": "test",
        ]
        let upload = following(stream, S3UploadStage.self, options: options, in: folder)
        // Part 2 (5 to 10 MiB) goes up from the first attempt's file.
        let stats = "http://127.0.0.1:\(server.port)/__stats"
        let finished = try await playAttempts(
            on: stream, in: folder, size: 12 << 20 + 777, final: 11 << 20, rewritten: rewritten
        ) {
            let received = try? JSONValue(parsing: await httpGet(stats))["receivedByPath"]?["/media/clip.mp4"]
            return received?.intValue ?? 0 >= 5 << 20
        }
        let outputs = try await upload.value.outputs.get()
        #expect(outputs["size"]?.intValue == 12 << 20 + 777)
        #expect(
            await peerTool("s3_tool.py", [String(server.port), "sha256", "media", "clip.mp4"])
                == sha256sum(finished), "the object is the second file")
        #expect(await peerTool("s3_tool.py", [String(server.port), "uploads", "media"]) == "0")
    }

    @Test(arguments: [false, true]) func aTusUploadFollowsTheExportsNewFile(rewritten: Bool) async throws {
        let server = try await PeerServer(script: "tus_server.py")
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stream = ExportStream()
        let options: JSONValue = [
            "endpoint": .string("http://127.0.0.1:\(server.port)/files/"),
            "file": .string(folder.appendingPathComponent("clip.mp4").path), "chunkSize": "1MiB",
        ]
        let upload = following(stream, TusUploadStage.self, options: options, in: folder)
        // Partial 2 (the 1 MiB after the head) goes up from the first attempt's file.
        let stats = "http://127.0.0.1:\(server.port)/stats"
        let finished = try await playAttempts(
            on: stream, in: folder, size: 3 << 20 + 777, final: 5 << 19, rewritten: rewritten
        ) {
            (try? JSONValue(parsing: await httpGet(stats))["received"]?.intValue ?? 0) ?? 0 >= 1 << 20
        }
        let outputs = try await upload.value.outputs.get()
        let url = try #require(outputs["url"]?.stringValue)
        let stored = server.folder.path + "/" + (url.split(separator: "/").last.map(String.init) ?? "")
        #expect(await sha256sum(stored) == sha256sum(finished), "the final upload is the second file")
    }
}
