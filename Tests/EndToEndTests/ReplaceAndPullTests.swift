import Foundation
import Sandbox
import StageKit
import TestSupport
import Testing

/// Content that changes at a known path replaces the file of the video its earlier version made (or makes a
/// second one when asked), and the pull approach lets the platform fetch a file that s3.upload shared.
@Suite struct ReplaceAndPullTests {
    static let token = "sandbox-token"
    static let environment = ["CHAIN_TOKEN": token]

    @Test(arguments: ["replace", "new"])
    func aChangedFileReplacesTheVideosFileOrMakesANewVideo(onChange: String) async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let clip = scratch.path("in/clip.mp4")
        try FileManager.default.copyItem(
            at: repositoryRoot.appendingPathComponent("samples/clip-h264-aac.mp4"), to: clip)
        let sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        let api = sandbox.baseURL
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "replace", "inputs": {"path": "in"},
             "stages": [
              {"id": "ticket", "uses": "vimeo.ticket", "with": {"api": "\(api)", "token": "${env.CHAIN_TOKEN}",
                "name": "${input.stem}", "onChange": "\(onChange)"}},
              {"id": "upload", "uses": "tus.upload", "with": {"url": "${ticket.uploadLink}"}},
              {"id": "activate", "uses": "vimeo.activate", "with": {"api": "\(api)", "token": "${env.CHAIN_TOKEN}", "ticket": "${ticket}"}}
             ],
             "onCancel": [
              {"id": "delete", "uses": "http.request", "if": "${ticket.created ?? false}", "with": {"method": "DELETE",
                "url": "\(api)${ticket.uri}", "headers": {"Authorization": "bearer ${env.CHAIN_TOKEN}"}, "expect": [204, 404]}}
             ]}
            """)
        let first = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: Self.environment)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let original = try #require(try await sandbox.videos(token: Self.token).first)
        let originalDigest = await sha256sum(clip.path)
        #expect(await sandbox.storedSHA256(of: original) == originalDigest)

        // Other content at the same path: a new version of the item.
        try FileManager.default.removeItem(at: clip)
        try FileManager.default.copyItem(
            at: repositoryRoot.appendingPathComponent("samples/clip-no-audio.mp4"), to: clip)
        let second = try await Binary.run(
            ["run", "wf.json", "--json"], in: scratch.root, environment: Self.environment)
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        let all = try await sandbox.videos(token: Self.token)
        let newest = try #require(all.first)
        #expect(await sandbox.storedSHA256(of: newest) == (await sha256sum(clip.path)))
        #expect(newest["upload"]?["status"] == "complete")
        let versions = try JSONValue(
            parsing: await httpGet("\(api)\(newest["uri"]?.stringValue ?? "")/versions", bearer: Self.token))
        if onChange == "replace" {
            #expect(all.count == 1, "\(all.map { $0["uri"] ?? .null })")
            #expect(newest["uri"] == original["uri"])
            #expect(versions["total"] == 2)
            #expect(versions["data"]?.arrayValue?.map { $0["active"] } == [true, false])
            #expect(second.stdout.contains("uploading a new version of \(original["uri"]?.stringValue ?? "")"))
        } else {
            #expect(all.count == 2)
            #expect(newest["uri"] != original["uri"])
            #expect(versions["total"] == 1)
            #expect(await sandbox.storedSHA256(of: all[1]) == originalDigest)
        }
        let again = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root, environment: Self.environment)
        #expect(runFinished(again.stdout)?["stagesRun"] == 0)
        #expect(try await sandbox.videos(token: Self.token).count == (onChange == "replace" ? 1 : 2))
        // Cancelling the new version deletes only a video it made: a replaced video stays.
        let cancel = try await Binary.run(
            ["cancel", "wf.json", "clip.mp4"], in: scratch.root, environment: Self.environment)
        #expect(cancel.status == 0, "\(cancel.stdout)\(cancel.stderr)")
        // (replace: the one video stays; new: the second video goes, the first stays.)
        #expect(try await sandbox.videos(token: Self.token).map { $0["uri"] } == [original["uri"]])
        await sandbox.stop()
    }

    @Test func thePlatformPullsTheFileS3UploadShared() async throws {
        let scratch = try Scratch()
        let storage = try await PeerServer(script: "s3_server.py", arguments: ["media"])
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let file = try await urandomFile(megabytes: 12, in: scratch.path("in"))
        let sandbox = try await SandboxServer.start(
            SandboxConfiguration(dataFolder: scratch.path("sandbox").path, transcodeDelay: .milliseconds(300)))
        let api = sandbox.baseURL
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "pull", "inputs": {"path": "in"},
             "stages": [
              {"id": "store", "uses": "s3.upload", "with": {"endpoint": "http://127.0.0.1:\(storage.port)", "bucket": "media",
                "key": "share/${input.name}", "accessKeyId": "test", "secretAccessKey": "${env.S3_TEST_SECRET}", "shareFor": "1h"}},
              {"id": "ticket", "uses": "vimeo.ticket", "with": {"api": "\(api)", "token": "${env.CHAIN_TOKEN}",
                "approach": "pull", "link": "${store.sharedURL}", "name": "${input.stem}"}},
              {"id": "wait", "uses": "vimeo.wait", "with": {"api": "\(api)", "token": "${env.CHAIN_TOKEN}", "uri": "${ticket.uri}",
                "interval": "100ms", "timeout": "60s"}}
             ]}
            """)
        var environment = Self.environment
        environment["S3_TEST_SECRET"] = "not-a-real-secret-\(UUID().uuidString)"
        let run = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root, environment: environment)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let videos = try await sandbox.videos(token: Self.token)
        #expect(videos.count == 1)
        let video = try #require(videos.first)
        #expect(video["upload"]?["approach"] == "pull")
        #expect(video["transcode"]?["status"] == "complete")
        #expect(await sandbox.storedSHA256(of: video) == (await sha256sum(file.path)))
        let link = video["upload"]?["link"]?.stringValue ?? ""
        #expect(link.contains("X-Amz-Signature="), "\(link)")
        await sandbox.stop()
    }
}
