import CCRC32C
import Foundation
import HTTPTransport
import StageKit
import TestSupport
import Testing

@testable import UploadStages

/// `s3.upload` against moto's S3 server, a third-party S3 implementation.
@Suite struct S3UploadTests {
    private func harness() -> StageHarness {
        StageHarness(
            stateFolder: FileManager.default.temporaryDirectory.appendingPathComponent("s3-\(UUID().uuidString)"))
    }

    private func options(_ server: PeerServer, _ file: URL, key: String, _ extra: [String: JSONValue] = [:])
        -> JSONValue
    {
        var options: [String: JSONValue] = [
            "endpoint": .string("http://127.0.0.1:\(server.port)"), "bucket": "media", "key": .string(key),
            "file": .string(file.path),
            "partSize": "5MiB", "accessKeyId": "test", "secretAccessKey": "test",
        ]
        options.merge(extra) { _, new in new }
        return .object(options)
    }

    private func unfinishedUploads(_ server: PeerServer) async -> String {
        await peerTool("s3_tool.py", [String(server.port), "uploads", "media"])
    }

    /// The PUT body bytes moto has received so far, cut bodies included (`GET /__stats`); 0 while it does
    /// not answer, so a wait asks again.
    private func bytesReceived(_ server: PeerServer) async -> Int {
        let stats = try? JSONValue(parsing: await httpGet("http://127.0.0.1:\(server.port)/__stats"))
        return stats?["received"]?.intValue ?? 0
    }

    @Test func crc32cMatchesTheStandardCheckValue() {
        var crc = CRC32C()
        Array("123456789".utf8).withUnsafeBytes { crc.update($0) }
        #expect(crc.bytes == [0xE3, 0x06, 0x92, 0x83])
    }

    /// The CPU instruction path and the table path agree at every length and alignment, in one piece
    /// or continued over pieces.
    @Test func crc32cInstructionAndTablesAgree() {
        var generator = SystemRandomNumberGenerator()
        let data = (0..<4099).map { _ in UInt8.random(in: 0...255, using: &generator) }
        data.withUnsafeBytes { all in
            for start in 0..<9 {
                for length in [0, 1, 7, 8, 9, 63, 64, 65, 1000, 4099 - start] {
                    let piece = UnsafeRawBufferPointer(rebasing: all[start..<start + length])
                    #expect(
                        crc32c_update(0, piece.baseAddress, piece.count)
                            == crc32c_update_portable(0, piece.baseAddress, piece.count))
                }
            }
            let whole = crc32c_update(0, all.baseAddress, all.count)
            let head = crc32c_update(0, all.baseAddress, 1001)
            #expect(crc32c_update(head, all.baseAddress! + 1001, all.count - 1001) == whole)
            #expect(
                crc32c_update_portable(
                    crc32c_update_portable(0, all.baseAddress, 13), all.baseAddress! + 13, all.count - 13) == whole)
        }
    }

    @Test(arguments: ["crc32c", "sha256", "none"])
    func uploadsByteForByteAndLeavesNoUnfinishedUpload(checksum: String) async throws {
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let file = try randomFile(bytes: 12 << 20 + 777, seed: 3)
        let run = await harness().run(
            S3UploadStage.self,
            options: options(server, file, key: "a dir/clip ünïcode+1.bin", ["checksum": .string(checksum)]))
        let outputs = try run.outputs.get()
        #expect(outputs["key"] == "a dir/clip ünïcode+1.bin")
        #expect(outputs["etag"]?.stringValue?.hasSuffix("-3\"") == true)
        #expect(
            await peerTool("s3_tool.py", [String(server.port), "sha256", "media", "a dir/clip ünïcode+1.bin"])
                == sha256sum(file.path))
        #expect(await unfinishedUploads(server) == "0")
        #expect(run.checkpoint?["parts"]?.arrayValue?.count == 3)
    }

    @Test func resumesAfterAnInterruptionSendingOnlyMissingParts() async throws {
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let file = try randomFile(bytes: 40 << 20, seed: 5)
        let options = options(server, file, key: "resume.bin", ["concurrency": 2])
        var services = ServiceValues()
        services[BandwidthLimitKey.self] = BandwidthLimiter(bytesPerSecond: 10 << 20)
        let harness = harness()
        let first = Task { await harness.run(S3UploadStage.self, options: options, services: services) }
        // Two 5 MiB parts go at once; for each part that comes back the stage starts the next one, then
        // checkpoints the finished one before it waits again. The fifth part starts on the third part back,
        // after two checkpoints: a byte of it means at least two parts are checkpointed, and three have not started.
        try await waitUntil("moto has received bytes of the fifth part") {
            await bytesReceived(server) > 4 * (5 << 20)
        }
        first.cancel()
        let interrupted = await first.value
        #expect(throws: CancellationError.self) { try interrupted.outputs.get() }
        let checkpoint = try #require(interrupted.checkpoint)
        let finished = checkpoint["parts"]?.arrayValue?.count ?? 0
        #expect(finished >= 2 && finished < 8, "\(finished) parts finished before the interruption")
        // Interrupted, not failed: the multipart upload stays for the resume.
        #expect(await unfinishedUploads(server) == "1")

        let resumed = await harness.run(S3UploadStage.self, options: options, checkpoint: checkpoint)
        _ = try resumed.outputs.get()
        #expect(
            await peerTool("s3_tool.py", [String(server.port), "sha256", "media", "resume.bin"]) == sha256sum(file.path)
        )
        #expect(await unfinishedUploads(server) == "0")
        // Only the missing parts went again: the first report starts past the finished parts.
        #expect((resumed.progress.first?.completed ?? 0) >= Int64(finished) * (5 << 20))
    }

    @Test func aFatalFailureAbortsTheMultipartUpload() async throws {
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let file = try randomFile(bytes: 6 << 20, seed: 11)
        let harness = harness()
        let first = await harness.run(S3UploadStage.self, options: options(server, file, key: "changed.bin"))
        let checkpoint = try #require(first.checkpoint)
        // The same upload again, as if it had stopped half way, but the file changed meanwhile.
        let started = try JSONValue(parsing: await peerTool("s3_tool.py", [String(server.port), "uploads", "media"]))
        #expect(started == 0)
        var stale = checkpoint.objectValue ?? [:]
        stale["fingerprint"] = ["size": .int(6 << 20), "modified": 1.0]
        let run = await harness.run(
            S3UploadStage.self, options: options(server, file, key: "changed.bin"), checkpoint: .object(stale))
        guard case .failure(let error) = run.outputs else {
            Issue.record("resumed with a changed file")
            return
        }
        #expect("\(error)".contains("changed since its upload began"))
        #expect(await unfinishedUploads(server) == "0")
    }

    @Test func missingCredentialsAreAClearError() async throws {
        let file = try randomFile(bytes: 10)
        let run = await harness().run(
            S3UploadStage.self,
            options: ["endpoint": "http://127.0.0.1:9", "bucket": "b", "key": "k", "file": .string(file.path)])
        guard case .failure(let error) = run.outputs else {
            Issue.record("uploaded without credentials")
            return
        }
        let environment = ProcessInfo.processInfo.environment
        if environment["AWS_ACCESS_KEY_ID"] == nil {
            #expect("\(error)".contains("no AWS credentials"), "\(error)")
        }
    }

    @Test func aMissingBucketIsAFatalErrorWithS3sCode() async throws {
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let file = try randomFile(bytes: 100)
        var options = options(server, file, key: "x").objectValue ?? [:]
        options["bucket"] = "no-such-bucket"
        let run = await harness().run(S3UploadStage.self, options: .object(options))
        guard case .failure(let error) = run.outputs else {
            Issue.record("uploaded into a missing bucket")
            return
        }
        #expect("\(error)".contains("NoSuchBucket"), "\(error)")
        #expect((error as? HTTPFailure)?.disposition.isRetryable == false)
    }
}
