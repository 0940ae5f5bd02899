import Foundation
import HTTPTransport
import Logging
import NIOConcurrencyHelpers
import StageKit
import StageRuntime
import TestSupport
import Testing

@testable import UploadStages

/// `s3.uploadFolder`'s checkpoint over a package of hundreds of small files: a bounded number of writes, and a
/// resume after a crash that sends no finished file again, also one finished but not yet recorded.
@Suite struct S3FolderCheckpointTests {
    /// A checkpoint store that counts writes and can freeze: after `freeze()` it drops every write, as a process
    /// killed at that moment would have left the last one it saved.
    final class CountingCheckpoints: StageCheckpointing {
        private struct State {
            var writes = 0
            var saved: JSONValue?
            var frozen = false
        }
        private let state: NIOLockedValueBox<State>

        init(_ saved: JSONValue? = nil) {
            state = NIOLockedValueBox(State(saved: saved))
        }

        var writes: Int { state.withLockedValue { $0.writes } }
        var saved: JSONValue? { state.withLockedValue { $0.saved } }

        func freeze() {
            state.withLockedValue { $0.frozen = true }
        }

        func saveCheckpoint(_ value: JSONValue) async throws {
            state.withLockedValue { state in
                state.writes += 1
                if !state.frozen { state.saved = value }
            }
        }

        func idempotencyKey(_ name: String) async throws -> String { name }
    }

    /// A package of three renditions of 80 segments each (a few hundred bytes to 2 KiB), their playlists and
    /// initialisation segments, and a master playlist.
    private func packageFolder() throws -> (URL, [String]) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("folder-\(UUID().uuidString)")
        var names = ["master.m3u8"]
        for rendition in ["720p", "360p", "audio"] {
            names += ["\(rendition)/index.m3u8", "\(rendition)/init.mp4"]
            names += (0..<80).map { "\(rendition)/seg_\(String(format: "%05d", $0)).m4s" }
        }
        for (index, name) in names.enumerated() {
            let url = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.moveItem(
                at: try randomFile(bytes: 300 + (index * 37) % 1800, seed: UInt64(index + 1)), to: url)
        }
        return (root, names.sorted())
    }

    /// Runs the stage over `folder`; `bytesPerSecond` limits its bandwidth as `--bwlimit` does.
    private func run(
        _ server: PeerServer, _ folder: URL, checkpoints: CountingCheckpoints, saved: JSONValue?,
        bytesPerSecond: Int64? = nil
    ) async throws -> JSONValue {
        let options: JSONValue = [
            "endpoint": .string("http://127.0.0.1:\(server.port)"), "bucket": "media", "prefix": "hls/",
            "folder": .string(folder.path), "concurrency": 4, "accessKeyId": "test", "secretAccessKey": "test",
        ]
        var services = ServiceValues()
        if let bytesPerSecond { services[BandwidthLimitKey.self] = BandwidthLimiter(bytesPerSecond: bytesPerSecond) }
        let context = StageContext(
            stageID: "publish", stageType: S3FolderUploadStage.stageType,
            item: InputItem(path: "/dev/null", relativePath: "item", size: 0, modified: 0), attempt: 1,
            logger: Logger(label: "test.s3.uploadFolder"),
            scratchFolder: FileManager.default.temporaryDirectory.appendingPathComponent("s3fc-\(UUID().uuidString)"),
            services: services, savedCheckpoint: saved, checkpointer: checkpoints, progress: { _ in })
        return try await S3FolderUploadStage.run(json: options, context: context)
    }

    /// Every object under hls/ with the SHA-256 of its bytes, read back by boto3.
    private func objects(_ server: PeerServer) async -> [String: String] {
        let lines = await peerTool("s3_tool.py", [String(server.port), "objects", "media", "hls/"])
        return Dictionary(
            lines.split(separator: "\n").compactMap { line -> (String, String)? in
                let fields = line.split(separator: " ")
                guard fields.count == 2 else { return nil }
                return (String(fields[0].dropFirst("hls/".count)), String(fields[1]))
            }, uniquingKeysWith: { first, _ in first })
    }

    private func receivedByPath(_ server: PeerServer) async throws -> [String: Int] {
        let stats = try JSONValue(parsing: await httpGet("http://127.0.0.1:\(server.port)/__stats"))
        var received: [String: Int] = [:]
        for (path, bytes) in stats["receivedByPath"]?.objectValue ?? [:] {
            received[String(path.dropFirst("/media/hls/".count))] = bytes.intValue ?? 0
        }
        return received
    }

    private func completedCount(_ server: PeerServer) async throws -> Int {
        let timeline = try JSONValue(parsing: await httpGet("http://127.0.0.1:\(server.port)/__timeline"))
        return timeline["completed"]?.arrayValue?.count ?? 0
    }

    @Test func batchesDoneMarksAndResumesWithoutSendingFinishedFilesAgain() async throws {
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let (folder, names) = try packageFolder()
        defer { try? FileManager.default.removeItem(at: folder) }

        // The first run "crashes" once a batch of files is recorded and a few more are on the server
        // without being recorded: the checkpoint stays as it was at that moment and the run is cancelled.
        let first = CountingCheckpoints()
        let started = ContinuousClock.now
        // About 290 KB at 64 KiB/s: the media files take seconds, so the done-marks are written by the second (a
        // batch of part of them) rather than at the end of the wave, however fast the host.
        let crashed = Task { try await run(server, folder, checkpoints: first, saved: nil, bytesPerSecond: 64 << 10) }
        // The first write comes before any file is sent; the second records a batch of files done.
        try await waitUntil("a batch of files recorded as done") { first.writes >= 2 }
        first.freeze()
        let recorded = first.saved?["done"]?.objectValue?.count ?? 0
        try await waitUntil("files finished after the last checkpoint") {
            try await completedCount(server) >= recorded + 5
        }
        crashed.cancel()
        _ = await crashed.result
        #expect(recorded > 0 && recorded < names.count)

        let before = await objects(server)
        let receivedBefore = try await receivedByPath(server)
        let local = try await localDigests(folder, names)
        let finished = Set(before.filter { local[$0.key] == $0.value }.keys)
        #expect(finished.count > recorded, "some files finished without being recorded")
        #expect(finished.count < names.count)
        #expect(!finished.contains("master.m3u8"))

        // The resume completes the folder; the files already up are not sent again, and it writes the
        // checkpoint a bounded number of times: at most once a second or per 256 files, and once per wave.
        let second = CountingCheckpoints(first.saved)
        let resumed = ContinuousClock.now
        let outputs = try await run(server, folder, checkpoints: second, saved: first.saved)
        let seconds = Int((ContinuousClock.now - resumed).components.seconds) + 1
        #expect(outputs["files"]?.intValue == names.count)
        #expect(second.writes <= seconds + names.count / 256 + 3, "\(second.writes) writes in \(seconds) s")
        #expect(first.writes <= Int((resumed - started).components.seconds) + 1 + names.count / 256 + 3)

        let after = await objects(server)
        #expect(after == local)
        let receivedAfter = try await receivedByPath(server)
        let sentAgain = finished.filter { receivedAfter[$0] != receivedBefore[$0] }
        #expect(sentAgain.isEmpty, "sent again: \(sentAgain.sorted())")
        let sent = Set(names).subtracting(finished)
        #expect(sent.allSatisfy { (receivedAfter[$0] ?? 0) > (receivedBefore[$0] ?? 0) })
    }

    /// A file larger than a part goes in parts; so does a small file whose multipart upload a checkpoint of an
    /// earlier version (every file multipart) records, so that it is completed, not left behind. The rest go in
    /// one PUT.
    @Test func largeFilesAndMultipartUploadsOfAnOldCheckpointGoInParts() async throws {
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("folder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sizes = ["large.mp4": (5 << 20) + 10, "begun.m4s": 1500, "small.m4s": 900]
        for (name, size) in sizes {
            try FileManager.default.moveItem(
                at: try randomFile(bytes: size, seed: UInt64(size)), to: folder.appendingPathComponent(name))
        }
        let begun = folder.appendingPathComponent("begun.m4s").path
        let old: JSONValue = [
            "target": .string("s3:http://127.0.0.1:\(server.port)/media/hls/"), "done": [:],
            "uploading": [
                "begun.m4s": [
                    "uploadId": "an-upload-the-server-no-longer-has", "key": "hls/begun.m4s",
                    "target": .string("s3:http://127.0.0.1:\(server.port)/media/hls/begun.m4s checksum=crc32c"),
                    "partSize": .int(5 << 20),
                    "fingerprint": [
                        "size": 1500, "modified": 0,
                        "content": .string(try ContentFingerprint.compute(path: begun, size: 1500, method: .sampled)),
                    ],
                    "parts": [],
                ]
            ],
        ]
        let options: JSONValue = [
            "endpoint": .string("http://127.0.0.1:\(server.port)"), "bucket": "media", "prefix": "hls/",
            "folder": .string(folder.path), "partSize": "5MiB", "concurrency": 2,
            "accessKeyId": "test", "secretAccessKey": "test",
        ]
        let run = await StageHarness(
            stateFolder: FileManager.default.temporaryDirectory.appendingPathComponent("s3fc-\(UUID().uuidString)")
        ).run(S3FolderUploadStage.self, options: options, checkpoint: old)
        #expect(try run.outputs.get()["files"] == 3)

        let timeline = try JSONValue(parsing: await httpGet("http://127.0.0.1:\(server.port)/__timeline"))
        // Only the multipart uploads' completions are timed as "completes", and all three objects appear.
        #expect(timeline["completes"]?.arrayValue?.count == 2)
        #expect(timeline["completed"]?.arrayValue?.count == 3)
        #expect(try await receivedByPath(server)["small.m4s"] == 900)
        let local = try await localDigests(folder, sizes.keys.sorted())
        #expect(await objects(server) == local)
    }

    /// The SHA-256 of every file, by the system's sha256sum in one run.
    private func localDigests(_ folder: URL, _ names: [String]) async throws -> [String: String] {
        let output = await runTool("/usr/bin/sha256sum", names.map { folder.appendingPathComponent($0).path })
        var digests: [String: String] = [:]
        for line in output.text.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 1)
            guard fields.count == 2 else { continue }
            let path = fields[1].trimmingCharacters(in: .whitespaces)
            digests[String(path.dropFirst(folder.path.count + 1))] = String(fields[0])
        }
        return digests
    }
}
