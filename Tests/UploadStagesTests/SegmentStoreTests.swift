import AsyncHTTPClient
import Foundation
import HTTPTransport
import StageKit
import StageRuntime
import TestSupport
import Testing
import UploadStages

/// The segment stores through one set of tests: a folder, and S3 against moto (a third-party S3
/// implementation). Stored objects are damaged behind the store's back (by writing the file, or by curl's
/// own SigV4 against moto), and cut-off uploads come from the fault proxy.
@Suite struct SegmentStoreTests {
    /// The stores under test.
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case folder, s3
        var testDescription: String { rawValue }
    }

    /// A store, and a way to replace a stored segment's bytes without it (the recorded hash stays).
    struct StoreUnderTest {
        let store: any SegmentStore
        let overwrite: (SegmentKey, String, URL) async throws -> Void
    }

    /// Above the folder store's 4 MiB read steps and the S3 store's 1 MiB write steps, not a multiple of either.
    private let segmentSize = (5 << 20) + 123

    private func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("segments-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private func s3Environment(port: Int) -> [String: String] {
        [
            "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:\(port)",
        ]
    }

    /// A request to moto signed by curl (`--aws-sigv4`), a client outside our code; returns the HTTP status.
    private func curlS3(_ port: Int, _ method: String, _ objectKey: String, _ extra: [String] = []) async -> String {
        let verb = method == "HEAD" ? ["-I"] : ["-X", method]
        return await runTool(
            "/usr/bin/curl",
            ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10"] + verb + [
                "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "test:test",
                "-H", "Content-Type: application/octet-stream",
            ] + extra + ["http://127.0.0.1:\(port)/media/\(objectKey)"]
        ).text
    }

    /// Runs `body` with a fresh store of `backend` (for S3, a moto server with the bucket `media`).
    private func withStore(_ backend: Backend, _ body: (StoreUnderTest) async throws -> Void) async throws {
        let client = HTTPClient.makeForStages()
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        do {
            switch backend {
            case .folder:
                let store = try segmentStore(address: root.path, environment: [:], httpClient: client)
                try await body(
                    StoreUnderTest(store: store) { key, sha256, bytes in
                        try Data(contentsOf: bytes).write(
                            to: root.appendingPathComponent(key.relativePath(sha256: sha256)))
                    })
            case .s3:
                let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
                let store = try segmentStore(
                    address: "s3://media/segments/", environment: s3Environment(port: server.port), httpClient: client)
                try await body(
                    StoreUnderTest(store: store) { key, sha256, bytes in
                        let status = await curlS3(
                            server.port, "PUT", "segments/\(key.relativePath(sha256: sha256))",
                            ["-H", "x-amz-meta-sha256: \(sha256)", "--data-binary", "@\(bytes.path)"])
                        #expect(status == "200")
                    })
                withExtendedLifetime(server) {}
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// A segment file and its SHA-256 by sha256sum.
    private func segment(seed: UInt64) async throws -> (URL, String) {
        let file = try randomFile(bytes: segmentSize, seed: seed)
        return (file, await sha256sum(file.path))
    }

    private func contents(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    @Test(arguments: Backend.allCases)
    func segmentRoundTripsWithItsHash(_ backend: Backend) async throws {
        try await withStore(backend) { subject in
            let store = subject.store
            let (file, sha256) = try await segment(seed: 1)
            defer { try? FileManager.default.removeItem(at: file) }
            let key = try SegmentKey(plan: SegmentKey.planID(digesting: ["full:1:abc", "{}"]), unit: "video-0007")
            #expect(try await !store.contains(key, sha256: sha256))
            try await store.put(file, as: key, sha256: sha256.uppercased())
            #expect(try await store.contains(key, sha256: sha256))
            #expect(try await !store.contains(key, sha256: String(repeating: "0", count: 64)))
            // Storing it again (a worker repeating a step after a crash) is harmless.
            try await store.put(file, as: key, sha256: sha256)
            let output = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: output) }
            let destination = output.appendingPathComponent("part-00007.mp4")
            try await store.fetch(key, sha256: sha256, to: destination)
            #expect(await sha256sum(destination.path) == sha256)
            #expect(try contents(output) == ["part-00007.mp4"])
        }
    }

    @Test(arguments: Backend.allCases)
    func damagedSegmentIsRefusedAndLeavesNothing(_ backend: Backend) async throws {
        try await withStore(backend) { subject in
            let (file, sha256) = try await segment(seed: 2)
            let (other, _) = try await segment(seed: 3)
            defer {
                try? FileManager.default.removeItem(at: file)
                try? FileManager.default.removeItem(at: other)
            }
            let key = try SegmentKey(plan: "plan", unit: "video-0001")
            try await subject.store.put(file, as: key, sha256: sha256)
            try await subject.overwrite(key, sha256, other)
            let output = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: output) }
            let destination = output.appendingPathComponent("part.mp4")
            let error = await #expect(throws: SegmentStoreError.self) {
                try await subject.store.fetch(key, sha256: sha256, to: destination)
            }
            #expect(error?.code == .hashMismatch)
            #expect(error?.disposition == .fatal)
            #expect(try contents(output).isEmpty)
        }
    }

    @Test(arguments: Backend.allCases)
    func missingSegmentIsNotFound(_ backend: Backend) async throws {
        try await withStore(backend) { subject in
            let (file, sha256) = try await segment(seed: 4)
            defer { try? FileManager.default.removeItem(at: file) }
            let output = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: output) }
            let destination = output.appendingPathComponent("part.mp4")
            let stored = try SegmentKey(plan: "plan", unit: "audio")
            try await subject.store.put(file, as: stored, sha256: sha256)
            // Another unit, another plan, and the stored unit with another hash (another worker's encode).
            for (key, hash) in [
                (try SegmentKey(plan: "plan", unit: "video-0001"), sha256),
                (try SegmentKey(plan: "other", unit: "audio"), sha256),
                (stored, String(repeating: "a", count: 64)),
            ] {
                let error = await #expect(throws: SegmentStoreError.self) {
                    try await subject.store.fetch(key, sha256: hash, to: destination)
                }
                #expect(error?.code == .notFound)
                #expect(error?.kind == .notFound)
            }
            #expect(try contents(output).isEmpty)
        }
    }

    @Test(arguments: Backend.allCases)
    func removeTakesEveryVersionAndIsIdempotent(_ backend: Backend) async throws {
        try await withStore(backend) { subject in
            let store = subject.store
            let (first, firstHash) = try await segment(seed: 5)
            let (second, secondHash) = try await segment(seed: 6)
            defer {
                try? FileManager.default.removeItem(at: first)
                try? FileManager.default.removeItem(at: second)
            }
            let video = try SegmentKey(plan: "plan", unit: "video-0001")
            let audio = try SegmentKey(plan: "plan", unit: "audio")
            let kept = try SegmentKey(plan: "plan", unit: "video-0002")
            let otherPlan = try SegmentKey(plan: "other", unit: "video-0001")
            // Two versions of one segment: two workers whose encodes differed.
            try await store.put(first, as: video, sha256: firstHash)
            try await store.put(second, as: video, sha256: secondHash)
            try await store.put(first, as: audio, sha256: firstHash)
            try await store.put(first, as: kept, sha256: firstHash)
            try await store.put(first, as: otherPlan, sha256: firstHash)
            let missing = try SegmentKey(plan: "plan", unit: "video-0009")
            try await store.remove([video, audio, missing])
            #expect(try await !store.contains(video, sha256: firstHash))
            #expect(try await !store.contains(video, sha256: secondHash))
            #expect(try await !store.contains(audio, sha256: firstHash))
            #expect(try await store.contains(kept, sha256: firstHash))
            #expect(try await store.contains(otherPlan, sha256: firstHash))
            try await store.remove([video, audio, missing])
            try await store.remove([])
            try await store.remove([kept, otherPlan, try SegmentKey(plan: "never", unit: "audio")])
            #expect(try await !store.contains(kept, sha256: firstHash))
            #expect(try await !store.contains(otherPlan, sha256: firstHash))
        }
    }

    /// Several writers of one segment at once in a shared folder (as after a takeover) leave one whole file and
    /// no partial ones. (S3 makes concurrent PUTs atomic itself; moto answers some of them with a 500.)
    @Test func concurrentWritersOfOneSegment() async throws {
        try await withStore(.folder) { subject in
            let store = subject.store
            let (file, sha256) = try await segment(seed: 7)
            defer { try? FileManager.default.removeItem(at: file) }
            let key = try SegmentKey(plan: "plan", unit: "video-0003")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { try await store.put(file, as: key, sha256: sha256) } }
                try await group.waitForAll()
            }
            let output = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: output) }
            try await store.fetch(key, sha256: sha256, to: output.appendingPathComponent("part.mp4"))
            #expect(await sha256sum(output.appendingPathComponent("part.mp4").path) == sha256)
            let folder = try #require(store as? FolderSegmentStore).root.appendingPathComponent("plan")
            #expect(try contents(folder) == ["video-0003.\(sha256)"])
        }
    }

    /// The folder store copies only bytes that match the hash it is given: a file changed since it was hashed
    /// is refused, and nothing appears under the key.
    @Test func folderStoreRefusesAFileThatDoesNotMatchItsHash() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FolderSegmentStore(root: root)
        let (file, _) = try await segment(seed: 8)
        defer { try? FileManager.default.removeItem(at: file) }
        let claimed = String(repeating: "b", count: 64)
        let key = try SegmentKey(plan: "plan", unit: "video-0001")
        let error = await #expect(throws: SegmentStoreError.self) {
            try await store.put(file, as: key, sha256: claimed)
        }
        #expect(error?.code == .hashMismatch)
        #expect(try await !store.contains(key, sha256: claimed))
        #expect(try contents(root.appendingPathComponent("plan")).isEmpty)
    }

    /// A PUT cut off in the middle of its body (the fault proxy resets the first request with a body after
    /// a random prefix; seed 3 resets request 1 and passes requests 2 and 3) fails as retryable and leaves
    /// no object under the key; putting it again succeeds.
    @Test(.timeLimit(.minutes(2)))
    func cutOffUploadLeavesNothingAndIsSentAgain() async throws {
        let server = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        let proxy = try await PeerServer(
            script: "fault_proxy.py", arguments: [String(server.port), "--seed", "3", "--reset-rate", "0.5"])
        let client = HTTPClient.makeForStages()
        do {
            let throughProxy = try segmentStore(
                address: "s3://media/segments", environment: s3Environment(port: proxy.port), httpClient: client)
            let direct = try segmentStore(
                address: "s3://media/segments", environment: s3Environment(port: server.port), httpClient: client)
            let (file, sha256) = try await segment(seed: 9)
            defer { try? FileManager.default.removeItem(at: file) }
            let key = try SegmentKey(plan: "plan", unit: "video-0004")
            let error = await #expect(throws: SegmentStoreError.self) {
                try await throughProxy.put(file, as: key, sha256: sha256)
            }
            #expect(error?.code == .transfer)
            #expect(error?.disposition.isRetryable == true)
            #expect(try await !direct.contains(key, sha256: sha256))
            #expect(await curlS3(server.port, "HEAD", "segments/\(key.relativePath(sha256: sha256))") == "404")
            try await throughProxy.put(file, as: key, sha256: sha256)
            let output = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: output) }
            try await direct.fetch(key, sha256: sha256, to: output.appendingPathComponent("part.mp4"))
            #expect(await sha256sum(output.appendingPathComponent("part.mp4").path) == sha256)
            let stats = try JSONValue(parsing: await httpGet("http://127.0.0.1:\(proxy.port)/__proxy_stats"))
            #expect(stats["resets"]?.intValue == 1)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    @Test func addressesOpenTheirStores() async throws {
        let client = HTTPClient.makeForStages()
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        do {
            let folder = try segmentStore(address: root.path, environment: [:], httpClient: client)
            #expect((folder as? FolderSegmentStore)?.root.path == root.path)
            let fileURL = try segmentStore(address: root.absoluteString, environment: [:], httpClient: client)
            #expect((fileURL as? FolderSegmentStore)?.root.path == root.path)
            let environment = s3Environment(port: 9)
            let s3 = try segmentStore(address: "s3://media/a/b/", environment: environment, httpClient: client)
            #expect((s3 as? S3SegmentStore)?.bucket == "media")
            #expect(s3.address == "s3://media/a/b")
            let bare = try segmentStore(address: "s3://media", environment: environment, httpClient: client)
            #expect(bare.address == "s3://media")
            for address in [
                "", "ftp://host/folder", "s3://", "s3://media/x?region=eu-west-1", "file://elsewhere/folder",
                root.appendingPathComponent("missing").path,
            ] {
                let error = #expect(throws: SegmentStoreError.self, "\(address)") {
                    _ = try segmentStore(address: address, environment: environment, httpClient: client)
                }
                #expect(error?.code == .invalidAddress)
            }
            // No credentials anywhere: a clear, fatal error.
            let error = #expect(throws: SegmentStoreError.self) {
                _ = try segmentStore(
                    address: "s3://media", environment: ["AWS_SHARED_CREDENTIALS_FILE": root.path + "/none"],
                    httpClient: client)
            }
            #expect(error?.disposition == .fatal)
            #expect(error?.message.contains("no AWS credentials") == true)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    @Test func keysAreSafeNamesAndPlanIDsSeparateTheirParts() throws {
        #expect(throws: SegmentStoreError.self) { try SegmentKey(plan: "", unit: "audio") }
        #expect(throws: SegmentStoreError.self) { try SegmentKey(plan: "../up", unit: "audio") }
        #expect(throws: SegmentStoreError.self) { try SegmentKey(plan: "plan", unit: "video.1") }
        #expect(throws: SegmentStoreError.self) { try SegmentKey(plan: "plan", unit: "vidéo") }
        #expect(throws: SegmentStoreError.self) {
            try SegmentKey(plan: String(repeating: "p", count: 129), unit: "audio")
        }
        let key = try SegmentKey(plan: "Plan_1-a", unit: "video-0007")
        #expect(key.relativePath(sha256: "ab") == "Plan_1-a/video-0007.ab")
        let plan = SegmentKey.planID(digesting: ["ab", "c"])
        #expect(plan.count == 32)
        #expect(plan == SegmentKey.planID(digesting: ["ab", "c"]))
        #expect(plan != SegmentKey.planID(digesting: ["a", "bc"]))
        #expect(throws: SegmentStoreError.self) { try SegmentKey.normalizedHash("abc") }
        #expect(try SegmentKey.normalizedHash(String(repeating: "F", count: 64)) == String(repeating: "f", count: 64))
    }
}
