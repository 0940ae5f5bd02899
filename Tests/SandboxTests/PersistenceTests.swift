import Foundation
import NIOHTTP1
import StageKit
import TestSupport
import Testing

@testable import Sandbox

@Suite("persistence")
struct PersistenceTests {
    @Test("a sandbox restarted on the same data folder knows its videos and partial uploads")
    func restart() async throws {
        let folder = Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = Fixture.bytes(3 << 20, seed: 8)
        let configuration = SandboxConfiguration(dataFolder: folder)

        let first = try await SandboxServer.start(configuration)
        let client = SandboxClient(first)
        let video = try #require(try await client.createVideo(approach: "tus", size: file.count).json)
        let id = Fixture.videoID(video)
        let link = try #require(video.value(at: "upload.upload_link")?.stringValue)
        #expect(try await client.tusPatch(link, offset: 0, bytes: file[0..<(1 << 20)]).status == 204)
        await first.stop()
        #expect(FileManager.default.fileExists(atPath: folder + "/index.json"), "an explicit folder is kept")

        let second = try await SandboxServer.start(configuration)
        let resumed = SandboxClient(second)
        let known = try #require(try await resumed.send(.GET, "/videos/\(id)").json)
        let newLink = try #require(known.value(at: "upload.upload_link")?.stringValue)
        #expect(newLink.hasPrefix(second.baseURL))
        #expect(try await resumed.tusOffset(newLink) == 1 << 20)
        #expect(try await resumed.tusPatch(newLink, offset: 1 << 20, bytes: file[(1 << 20)...]).status == 204)
        #expect(try await resumed.storedSHA256(video: id) == Fixture.sha256Hex(file))
        #expect(try await resumed.send(.GET, "/me/videos").json?["total"]?.integerValue == 1)
        await second.stop()
    }

    @Test("a pull still fetching when the sandbox stops is upload.status error after a restart on the same folder")
    func pullStoppedMidway() async throws {
        // Answers 1 MiB, sends the first 1000 bytes (0x5A) and then nothing more.
        let source = try await PeerServer(script: "stalled_source.py", arguments: ["--length", "1048576"])
        let folder = Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let configuration = SandboxConfiguration(dataFolder: folder)
        let link = "http://127.0.0.1:\(source.port)/clip.mp4"

        let first = try await SandboxServer.start(configuration)
        let client = SandboxClient(first)
        let created = try await client.send(
            .POST, "/me/videos", json: ["upload": ["approach": "pull", "link": .string(link)]])
        #expect(created.status == 200, "\(created.text)")
        let id = Fixture.videoID(created.json)
        let sent = Fixture.sha256Hex([UInt8](repeating: 0x5A, count: 1000))
        try await waitUntil("the sandbox stored the first bytes of \(link)") {
            (try? await client.storedSHA256(video: id)) == sent
        }
        #expect(try await client.send(.GET, "/videos/\(id)").json?.value(at: "upload.status") == "in_progress")
        await first.stop()

        let second = try await SandboxServer.start(configuration)
        let restarted = SandboxClient(second)
        let video = try #require(try await restarted.send(.GET, "/videos/\(id)").json)
        #expect(video.value(at: "upload.status") == "error")
        #expect(video["status"] == "uploading_error")
        #expect(try await restarted.storedSHA256(video: id) == sent, "the bytes that reached the disk are kept")
        await second.stop()
        // The source keeps its connection open until the first sandbox has given up on it.
        withExtendedLifetime(source) {}
    }

    @Test("a temporary data folder is removed on stop")
    func temporaryFolder() async throws {
        let sandbox = try await SandboxServer.start()
        #expect(FileManager.default.fileExists(atPath: sandbox.dataFolderPath))
        #expect(sandbox.port > 0)
        #expect(sandbox.baseURL == "http://127.0.0.1:\(sandbox.port)")
        await sandbox.stop()
        #expect(!FileManager.default.fileExists(atPath: sandbox.dataFolderPath))
    }

    @Test("a port in use is reported as a startup error")
    func portInUse() async throws {
        let sandbox = try await SandboxServer.start()
        defer { Task { await sandbox.stop() } }
        await #expect(throws: SandboxError.self) {
            _ = try await SandboxServer.start(SandboxConfiguration(port: sandbox.port))
        }
        await sandbox.stop()
    }
}
