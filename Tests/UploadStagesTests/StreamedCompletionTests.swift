import Foundation
import StageKit
import StageRuntime
import TestSupport
import Testing

@testable import UploadStages

/// A streamed `s3.upload` (`"stream": true`) that S3 completed just before a crash, the stage's success never
/// recorded: the rerun finds the object, checks it is the export's, and keeps it without sending a part.
@Suite struct StreamedCompletionTests {
    private func options(_ server: PeerServer, _ file: URL) -> JSONValue {
        [
            "endpoint": .string("http://127.0.0.1:\(server.port)"), "bucket": "media", "key": "streamed.mp4",
            "file": .string(file.path), "partSize": "5MiB", "checksum": "sha256", "accessKeyId": "test",
            "secretAccessKey": "test",
        ]
    }

    /// The stream of an export that has finished `file` (an export reused, or written again, by the rerun).
    private func finishedExport(_ file: URL) throws -> ServiceValues {
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int)
        let stream = ExportStream()
        stream.open(destination: file.path, writing: file.path, head: 4096)
        stream.finish(destination: file.path, size: Int64(size))
        var services = ServiceValues()
        services[ExportStreamKey.self] = stream
        return services
    }

    private func bytesReceived(_ server: PeerServer) async -> Int {
        let stats = try? JSONValue(parsing: await httpGet("http://127.0.0.1:\(server.port)/__stats"))
        return stats?["received"]?.intValue ?? 0
    }

    @Test func anUploadCompletedBeforeTheCrashIsKeptWithoutSendingAPart() async throws {
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let export = try randomFile(bytes: 12 << 20 + 777, seed: 7)
        let harness = StageHarness(
            stateFolder: FileManager.default.temporaryDirectory.appendingPathComponent("streamed-\(UUID().uuidString)"))
        let first = await harness.run(
            S3UploadStage.self, options: options(server, export), services: try finishedExport(export))
        let completed = try first.outputs.get()
        // The last checkpoint is the one before CompleteMultipartUpload: every part recorded, part 1 among them.
        let completing = try #require(first.checkpoint)
        #expect(completing["parts"]?.arrayValue?.count == 3)
        let sent = await bytesReceived(server)

        let rerun = await harness.run(
            S3UploadStage.self, options: options(server, export), checkpoint: completing,
            services: try finishedExport(export))
        let kept = try rerun.outputs.get()
        #expect(await bytesReceived(server) == sent, "a part was sent again")
        #expect(kept["etag"] == completed["etag"])
        #expect(kept["size"] == completed["size"])
        #expect(
            await peerTool("s3_tool.py", [String(server.port), "sha256", "media", "streamed.mp4"])
                == sha256sum(export.path))
        #expect(await peerTool("s3_tool.py", [String(server.port), "uploads", "media"]) == "0")

        // An export the rerun wrote with the size of the uploaded one but other bytes is not that object.
        let other = try randomFile(bytes: 12 << 20 + 777, seed: 8)
        let changed = await harness.run(
            S3UploadStage.self, options: options(server, other), checkpoint: completing,
            services: try finishedExport(other))
        _ = try changed.outputs.get()
        #expect(await bytesReceived(server) >= sent + (12 << 20 + 777))
        #expect(
            await peerTool("s3_tool.py", [String(server.port), "sha256", "media", "streamed.mp4"])
                == sha256sum(other.path))
        #expect(await peerTool("s3_tool.py", [String(server.port), "uploads", "media"]) == "0")
    }

    /// S3's ETag of a completed multipart upload: the MD5 of the parts' MD5s, a dash and their count.
    @Test func theObjectsETagMustBeTheCompletionOfTheRecordedParts() {
        let parts = [
            UploadedPart(number: 1, etag: "\"9e107d9d372bb6826bd81d3542a419d6\""),
            UploadedPart(number: 2, etag: "\"e4d909c290d0fb1ca068ffaddf22cbd0\""),
        ]
        // md5(0x9e107d…d6 0xe4d909…d0), computed with Python's hashlib.
        let completion = "\"17b630c8d385a942f1d3f7d0ca327a6c-2\""
        #expect(S3Backend.etag(completion, canComplete: parts))
        #expect(!S3Backend.etag("\"17b630c8d385a942f1d3f7d0ca327a6c-3\"", canComplete: parts))
        #expect(!S3Backend.etag("\"00000000000000000000000000000000-2\"", canComplete: parts))
        // Another storage's form tells nothing.
        #expect(S3Backend.etag("\"5B2B6D0C\"", canComplete: parts))
    }
}
