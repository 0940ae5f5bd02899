import Foundation
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `kill -9` of `pipeline` at random points of a 200 MiB upload, then rerun: the file arrives whole and
/// the bytes sent more than once, counted by the server, stay within one chunk per kill.
@Suite struct UploadKillTests {
    static let megabytes = 200
    static let chunk = 8 << 20

    @Test func tusUploadSurvivesKillNine() async throws {
        let scratch = try Scratch()
        let server = try await PeerServer(script: "tus_server.py")
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let file = try await urandomFile(megabytes: Self.megabytes, in: scratch.path("in"))
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "tus-kill", "inputs": {"path": "in"}, "stages": [
              {"id": "upload", "uses": "tus.upload", "with": {"endpoint": "http://127.0.0.1:\(server.port)/files/", "chunkSize": "8MiB"}}
            ]}
            """)
        let random = SeededRandom("tusUploadSurvivesKillNine")
        let stats = "http://127.0.0.1:\(server.port)/stats"
        var kills = 0
        for _ in 0..<3 {
            let target = try await Self.received(stats) + Self.seededShare(random)
            let process = try Binary.start(["run", "wf.json", "--bwlimit", "50MiB"], in: scratch.root)
            try await waitUntil("the server received \(target) bytes") {
                guard process.isRunning else { return true }
                let received = (try? await Self.received(stats)) ?? 0
                return received >= target
            }
            if process.isRunning {
                process.signal(SIGKILL)
                kills += 1
            }
            _ = await process.exit()
        }
        #expect(kills == 3, "the upload finished before three kills")
        let finish = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(finish.status == 0, "\(finish.stdout)\(finish.stderr)")

        let stored = try FileManager.default.contentsOfDirectory(atPath: server.folder.path).filter { $0.count == 32 }
        #expect(stored.count == 1, "one upload, not one per run: \(stored)")
        let original = await sha256sum(file.path)
        #expect(await sha256sum(server.folder.appendingPathComponent(stored.first ?? "").path) == original)

        let resent = try await Self.received(stats) - (Self.megabytes << 20)
        #expect(resent >= 0 && resent <= kills * Self.chunk, "\(resent) bytes sent twice for \(kills) kills")
        print("tus kill test: \(resent) bytes re-sent over \(kills) kills (chunk \(Self.chunk))")
    }

    /// The upload body bytes the server has received so far, kept or not (its `received` counter).
    static func received(_ stats: String) async throws -> Int {
        try JSONValue(parsing: await httpGet(stats))["received"]?.intValue ?? 0
    }

    /// When to kill a run: once the server has received a seeded 5 to 25 % of the file more than before it.
    /// Three runs send at most 75 % of the file (re-sent bytes included), so every kill lands mid-upload.
    static func seededShare(_ random: SeededRandom) -> Int {
        Int(Double(megabytes << 20) * (0.05 + 0.2 * random.fraction()))
    }
}

extension UploadKillTests {
    @Test func s3UploadSurvivesKillNine() async throws {
        let scratch = try Scratch()
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let file = try await urandomFile(megabytes: Self.megabytes, in: scratch.path("in"))
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "s3-kill", "inputs": {"path": "in"}, "stages": [
              {"id": "upload", "uses": "s3.upload", "with": {"endpoint": "http://127.0.0.1:\(server.port)", "bucket": "media",
               "key": "uploads/${input.name}", "partSize": "8MiB", "concurrency": 2, "checksum": "sha256",
               "accessKeyId": "test", "secretAccessKey": "${env.S3_TEST_SECRET}"}}
            ]}
            """)
        let environment = ["S3_TEST_SECRET": "not-a-real-secret-\(UUID().uuidString)"]
        let random = SeededRandom("s3UploadSurvivesKillNine")
        let stats = "http://127.0.0.1:\(server.port)/__stats"
        var kills = 0
        for _ in 0..<3 {
            let target = try await Self.received(stats) + Self.seededShare(random)
            let process = try Binary.start(
                ["run", "wf.json", "--bwlimit", "40MiB"], in: scratch.root, environment: environment)
            try await waitUntil("the server received \(target) bytes") {
                guard process.isRunning else { return true }
                let received = (try? await Self.received(stats)) ?? 0
                return received >= target
            }
            if process.isRunning {
                process.signal(SIGKILL)
                kills += 1
            }
            _ = await process.exit()
        }
        #expect(kills == 3, "the upload finished before three kills")
        let finish = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: environment)
        #expect(finish.status == 0, "\(finish.stdout)\(finish.stderr)")
        #expect(
            await peerTool("s3_tool.py", [String(server.port), "sha256", "media", "uploads/\(file.lastPathComponent)"])
                == sha256sum(file.path))
        #expect(await peerTool("s3_tool.py", [String(server.port), "uploads", "media"]) == "0")
        for (name, text) in scratch.allFiles(under: ".pipeline") {
            #expect(!text.contains(environment["S3_TEST_SECRET"] ?? "-"), "secret in \(name)")
        }
        // Parts in flight when a kill came are sent again: at most `concurrency` parts per kill.
        let resent = try await Self.received(stats) - (Self.megabytes << 20)
        #expect(resent >= 0 && resent <= kills * 2 * Self.chunk, "\(resent) bytes sent twice for \(kills) kills")
        print("s3 kill test: \(resent) bytes re-sent over \(kills) kills (2 parts of \(Self.chunk) in flight)")
    }
}
