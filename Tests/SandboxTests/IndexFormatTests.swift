import Foundation
import Logging
import NIOHTTP1
import StageKit
import Testing

@testable import Sandbox

/// `index.json` in format version 1: a version-1 data folder loads with every platform's records and is written
/// back byte for byte, and a new data folder's index has every key of the format, so whatever reads version 1
/// reads what the sandbox writes.
@Suite("index format")
struct IndexFormatTests {
    /// A version-1 data folder, the format's reference (never regenerated from the code under test): Vimeo
    /// videos (a tus upload half there with tags, a streaming upload, a file replaced by a version with an
    /// active picture, a video made from a ticket, a failed pull), an open ticket, a ready and a half uploaded
    /// generic asset, a standalone tus upload, VOD videos (one whose object arrived) and an image, an OSS object
    /// and an open multipart upload.
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/data-folder-v1")

    /// The top-level keys of a version-1 index.
    static let keys = [
        "aliyun", "assets", "idempotencyKeys", "nextVideoNumber", "pictures", "tickets", "uploads", "version",
        "versions", "videos",
    ]

    /// The picture of the fixture.
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 56)

    @Test("a version-1 data folder is written back byte for byte")
    func rewrittenUnchanged() async throws {
        let folder = try Self.copyOfFixture()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let index = try Self.fixtureIndex()
        let half = try #require(Self.video(named: "Half there", in: index))
        let indexPath = folder + "/index.json"
        try await withSandbox(SandboxConfiguration(dataFolder: folder)) { _, client in
            let video = try #require(try await client.send(.GET, "/videos/\(half)").json)
            let link = try #require(video.value(at: "upload.upload_link")?.stringValue)
            // The sandbox has read the index: what is in the folder from now on is what it writes.
            try FileManager.default.removeItem(atPath: indexPath)
            // An empty PATCH takes and returns the write lease, which writes the index.
            #expect(try await client.tusPatch(link, offset: 2048, bytes: []).status == 204)
            let written = try #require(FileManager.default.contents(atPath: indexPath), "the PATCH wrote no index")
            #expect(written == (try Data(contentsOf: Self.fixture.appendingPathComponent("index.json"))))
        }
    }

    @Test("every platform finds its records in a version-1 data folder, and carries on")
    func everyPlatformLoads() async throws {
        let folder = try Self.copyOfFixture()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let index = try Self.fixtureIndex()
        try await withSandbox(SandboxConfiguration(dataFolder: folder)) { _, client in
            try await Self.checkVimeo(client, index)
            try await Self.checkTicket(client, index)
            try await Self.checkGenericAndTus(client, index)
            try await Self.checkAliyun(client)
            let stats = try #require(try await client.send(.GET, "/sandbox/stats", auth: false).json)
            #expect(stats["videos"] == 5)
            #expect(stats["assets"] == 2)
            #expect(stats["uploads"] == 10)
        }
    }

    @Test("a new data folder's index has every key of a version-1 index, whichever platform wrote it")
    func freshIndexKeys() async throws {
        let folder = Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await withSandbox(SandboxConfiguration(dataFolder: folder)) { _, client in
            let created = try await client.send(
                .POST, "/upload", headers: [("Tus-Resumable", "1.0.0"), ("Upload-Length", "10")], auth: false)
            #expect(created.status == 201)
            let written = try Data(contentsOf: URL(fileURLWithPath: folder + "/index.json"))
            let keys = try #require(JSONValue.parse(Array(written))?.objectValue?.keys.sorted())
            #expect(keys == Self.keys)
        }
    }

    @Test("each section of the index writes top-level keys of its own, and together they are the format's keys")
    func sectionsKeepTheirOwnKeys() async throws {
        let folder = try Self.copyOfFixture()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let platforms = try await SandboxPlatforms.load(
            configuration: SandboxConfiguration(dataFolder: folder), folder: try DataFolder.prepare(folder),
            logger: Logger(label: "IndexFormatTests"))
        var writers: [String: String] = [:]
        for section in await platforms.core.index.sections {
            let name = String(describing: type(of: section))
            let keys = try #require(JSONValue.parse(try JSONEncoder().encode(section))?.objectValue?.keys)
            for key in keys {
                let other = writers.updateValue(name, forKey: key)
                #expect(other == nil, "\(key) is written by both \(other ?? "") and \(name)")
            }
        }
        #expect(writers.keys.sorted() == Self.keys)
    }

    @Test("an index of a later version is refused, naming its version, and left as it is")
    func laterVersionRefused() async throws {
        let folder = Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let later = Data(#"{"version": 2, "uploads": {}}"#.utf8)
        try later.write(to: URL(fileURLWithPath: folder + "/index.json"))
        let error = await #expect(throws: SandboxError.self) {
            try await SandboxServer.start(SandboxConfiguration(dataFolder: folder))
        }
        #expect(error?.code == .index)
        let message = error?.message ?? ""
        #expect(message.contains("version 2 (a newer pipeline wrote it)"), "\(message)")
        #expect(FileManager.default.contents(atPath: folder + "/index.json") == later)
    }

    @Test("sections that write the same top-level key are refused")
    func overlappingSectionsRefused() async throws {
        let folder = Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let overlaps: [[any IndexSection]] = [[VimeoSection(), VideosAgain()], [VersionAgain()]]
        for sections in overlaps {
            await #expect(throws: SandboxError.self, "\(sections)") {
                try await Self.keep(sections, in: folder)
            }
        }
    }

    /// Makes `sections` the sections of a new index of `folder`.
    @SandboxActor
    private static func keep(_ sections: [any IndexSection], in folder: String) throws {
        let dataFolder = try DataFolder.prepare(folder)
        let index = try SandboxIndex(
            IndexDocument.read(dataFolder), folder: dataFolder, logger: Logger(label: "IndexFormatTests"))
        try index.keep(sections.map(SectionKeeper.init))
    }

    /// The tus video carries on from its half, the others show what they were.
    private static func checkVimeo(_ client: SandboxClient, _ index: JSONValue) async throws {
        let half = try #require(Self.video(named: "Half there", in: index))
        let video = try #require(try await client.send(.GET, "/videos/\(half)").json)
        #expect(video.value(at: "upload.status") == "in_progress")
        #expect(video["tags"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["alpha", "beta"])
        let link = try #require(video.value(at: "upload.upload_link")?.stringValue)
        #expect(try await client.tusOffset(link) == 2048)
        let rest = Fixture.bytes(2048, seed: 11)
        #expect(try await client.tusPatch(link, offset: 2048, bytes: rest[...]).status == 204)
        #expect(try await client.storedSHA256(video: half) == Fixture.sha256Hex(Fixture.bytes(2048, seed: 1) + rest))

        let streamed = try #require(Self.video(named: "Streamed", in: index))
        #expect(try await client.send(.GET, "/videos/\(streamed)").json?.value(at: "upload.status") == "complete")
        #expect(try await client.storedSHA256(video: streamed) == Fixture.sha256Hex(Fixture.bytes(1000, seed: 2)))

        let replaced = try #require(Self.video(named: "Replaced", in: index))
        let versions = try #require(try await client.send(.GET, "/videos/\(replaced)/versions").json)
        #expect(versions["total"] == 2)
        #expect(versions["data"]?.arrayValue?.first?["file_name"] == "new.mp4")
        #expect(versions["data"]?.arrayValue?.first?["active"] == true)
        #expect(try await client.storedSHA256(video: replaced) == Fixture.sha256Hex(Fixture.bytes(500, seed: 4)))
        let pictured = try #require(try await client.send(.GET, "/videos/\(replaced)").json)
        let picture = try #require(pictured.value(at: "pictures.uri")?.stringValue?.split(separator: "/").last)
        let image = try await client.send(.GET, "/sandbox/pictures/\(picture)/sha256", auth: false).text
        #expect(image == Fixture.sha256Hex(Self.png))

        let pulled = try #require(Self.video(named: "Pulled", in: index))
        #expect(try await client.send(.GET, "/videos/\(pulled)").json?.value(at: "upload.status") == "error")
    }

    /// `complete_uri` of the ticket that became a video answers that video again; the open ticket takes its
    /// first `PUT`.
    private static func checkTicket(_ client: SandboxClient, _ index: JSONValue) async throws {
        let tickets = try #require(index["tickets"]?.objectValue)
        let done = try #require(tickets.values.first { $0["videoID"] != nil })
        let uri =
            "/users/1/uploads/\(done["id"]?.stringValue ?? "")?video_file_id="
            + "\(done["videoFileID"]?.stringValue ?? "")&signature=\(done["signature"]?.stringValue ?? "")"
        let completed = try await client.send(.DELETE, uri)
        #expect(completed.status == 201)
        #expect(completed.header("Location") == "/videos/\(done["videoID"]?.stringValue ?? "")")

        let open = try #require(tickets.values.first { $0["videoID"] == nil }?["id"]?.stringValue)
        let token = try #require(index["uploads"]?[open]?["token"]?.stringValue)
        let bytes = Fixture.bytes(300, seed: 12)
        let put = try await client.send(
            .PUT, "/upload/\(open)?token=\(token)", headers: [("Content-Range", "bytes 0-299/300")], body: bytes,
            auth: false)
        #expect(put.status == 200)
    }

    /// The ready asset is still ready; the standalone tus upload resumes where it was.
    private static func checkGenericAndTus(_ client: SandboxClient, _ index: JSONValue) async throws {
        let assets = try #require(index["assets"]?.objectValue)
        let ready = try #require(assets.values.first { $0["name"] == "ready.bin" }?["id"]?.stringValue)
        let asset = try #require(try await client.send(.GET, "/generic/assets/\(ready)").json)
        #expect(asset["status"] == "ready")
        #expect(asset["title"] == "Ready")
        #expect(asset["sha256"]?.stringValue == Fixture.sha256Hex(Fixture.bytes(1500, seed: 6)))
        let half = try #require(assets.values.first { $0["name"] == "half.bin" }?["id"]?.stringValue)
        #expect(try await client.send(.GET, "/generic/assets/\(half)").json?["received"] == 800)

        let uploads = try #require(index["uploads"]?.objectValue)
        let standalone = try #require(uploads.values.first { $0["metadata"] != nil }?["id"]?.stringValue)
        #expect(try await client.tusOffset(client.baseURL + "/upload/\(standalone)") == 1200)
    }

    /// VOD's videos and image and OSS's object and multipart upload are all there.
    private static func checkAliyun(_ client: SandboxClient) async throws {
        let aliyun = try #require(try await client.send(.GET, "/sandbox/aliyun", auth: false).json)
        let statuses = aliyun["videos"]?.arrayValue?.compactMap { $0["Status"]?.stringValue }.sorted()
        #expect(statuses == ["Normal", "Uploading"])
        #expect(aliyun["images"] == 1)
        #expect(aliyun["multipartUploads"] == 1)
        #expect(
            aliyun["objects"]?.arrayValue?.first?["SHA256"]?.stringValue
                == Fixture.sha256Hex(Fixture.bytes(900, seed: 9)))
    }

    /// The id of the fixture's video called `name`.
    private static func video(named name: String, in index: JSONValue) -> String? {
        index["videos"]?.objectValue?.values.first { $0["name"]?.stringValue == name }?["id"]?.stringValue
    }

    private static func fixtureIndex() throws -> JSONValue {
        let data = try Data(contentsOf: Self.fixture.appendingPathComponent("index.json"))
        return try #require(JSONValue.parse(Array(data)))
    }

    /// A copy of the fixture in a fresh folder, since a sandbox writes to its data folder.
    private static func copyOfFixture() throws -> String {
        let folder = Fixture.temporaryFolder() + "/data"
        try FileManager.default.copyItem(atPath: Self.fixture.path, toPath: folder)
        return folder
    }
}

/// Keeps any section, to try sections that collide.
@SandboxActor
private final class SectionKeeper: IndexSectionKeeper {
    let indexSection: any IndexSection

    init(_ section: any IndexSection) {
        self.indexSection = section
    }
}

/// A section that writes `videos`, as Vimeo's does.
private struct VideosAgain: IndexSection {
    var videos: [String: String] = [:]
}

/// A section that writes `version`, as the header does.
private struct VersionAgain: IndexSection {
    var version = 2
}
