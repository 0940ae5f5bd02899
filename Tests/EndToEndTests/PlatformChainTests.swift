import Foundation
import NIOConcurrencyHelpers
import Sandbox
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The whole chain (export → ticket → upload → activate → metadata) with the built binary against the
/// Sandbox: per upload approach, across kill -9, and with faults on.
@Suite struct PlatformChainTests {
    static let token = "sandbox-token"

    /// The chain's workflow; `auth` renews tokens from the Sandbox's OAuth endpoint when asked. The video's
    /// URI: `ticket.uri` with tus (the ticket made it), `activate.uri` with a legacy streaming ticket (the
    /// video exists once `complete_uri` made it).
    static func workflow(api: String, approach: String, withAuth: Bool = false) -> String {
        let video = approach == "tus" ? "ticket" : "activate"
        let token = withAuth ? "${auth.token}" : "${env.CHAIN_TOKEN}"
        let refresh = withAuth ? #", "refreshWith": "auth""# : ""
        let upload =
            approach == "tus"
            ? #"{"id": "upload", "uses": "tus.upload", "with": {"url": "${ticket.uploadLink}", "file": "${export.path}", "chunkSize": "256KiB", "stallTimeout": "5s"}, "retry": {"attempts": 20, "initialDelay": "0.5s"}}"#
            : #"{"id": "upload", "uses": "http.upload", "with": {"url": "${ticket.uploadLink}", "file": "${export.path}", "chunkSize": "256KiB", "stallTimeout": "5s"}, "retry": {"attempts": 20, "initialDelay": "0.5s"}}"#
        let auth =
            withAuth
            ? """
            {"id": "auth", "uses": "http.request", "secret": true, "with": {"method": "POST", "url": "\(api)/oauth/token",
              "headers": {"Authorization": "Basic c2FuZGJveC1jbGllbnQ6c2FuZGJveC1zZWNyZXQ="}, "json": {"grant_type": "client_credentials"},
              "outputs": {"token": "/access_token"}}},
            """
            : ""
        return """
            {"version": 1, "name": "chain-\(approach)", "inputs": {"path": "in"},
             "defaults": {"retry": {"attempts": 8, "initialDelay": "100ms", "maxDelay": "1s"}},
             "stages": [
              \(auth)
              {"id": "export", "uses": "ffmpeg.transcode", "with": {"mode": "auto", "output": "out/${input.stem}.mp4"}},
              {"id": "ticket", "uses": "vimeo.ticket"\(refresh), "with": {"api": "\(api)", "token": "\(token)", "approach": "\(approach)",
                "file": "${export.path}", "name": "${input.stem}"}},
              \(upload),
              {"id": "activate", "uses": "vimeo.activate"\(refresh), "with": {"api": "\(api)", "token": "\(token)", "ticket": "${ticket}"}},
              {"id": "metadata", "uses": "vimeo.metadata"\(refresh), "with": {"api": "\(api)", "token": "\(token)", "uri": "${activate.uri}",
                "name": "${input.stem}", "description": "from ${input.name}", "privacy": "unlisted", "tags": ["chain", "${input.ext}"]}}
             ],
             "onCancel": [
              {"id": "delete", "uses": "http.request", "if": "\(approach == "tus" ? "${ticket.created ?? false}" : "${activate.uri ?? ''}")", "with": {"method": "DELETE",
                "url": "\(api)${\(video).uri}", "headers": {"Authorization": "bearer \(token)"}, "expect": [204, 404]}}
             ]}
            """
    }

    /// Sample clips, each a few hundred KiB.
    private func inputs(_ scratch: borrowing Scratch) throws {
        for name in ["clip-h264-aac.mp4", "clip-no-audio.mp4", "clip-portrait-rotated.mp4"] {
            try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                at: repositoryRoot.appendingPathComponent("samples/\(name)"), to: scratch.path("in/\(name)"))
        }
    }

    /// Checks one complete video per input, with the exported bytes and the metadata.
    private func expectOneCompleteVideoPerInput(_ sandbox: RunningSandbox, _ scratch: borrowing Scratch) async throws {
        let all = try await sandbox.videos(token: Self.token)
        let stems = ["clip-h264-aac", "clip-no-audio", "clip-portrait-rotated"]
        #expect(
            all.count == stems.count,
            "\(all.count) videos for \(stems.count) inputs: \(all.map { $0["name"] ?? .null })")
        for stem in stems {
            let matching = all.filter { $0["name"]?.stringValue == stem }
            #expect(matching.count == 1, "\(stem): \(matching.count) videos")
            guard let video = matching.first else { continue }
            #expect(video["upload"]?["status"] == "complete")
            #expect(video["privacy"]?["view"] == "unlisted")
            #expect(video["description"] == .string("from \(stem).mp4"))
            #expect(video["tags"]?.arrayValue?.compactMap { $0["name"]?.stringValue }.sorted() == ["chain", "mp4"])
            #expect(
                await sandbox.storedSHA256(of: video) == (await sha256sum(scratch.path("out/\(stem).mp4").path)))
        }
    }

    @Test(arguments: ["tus", "streaming"])
    func theChainPutsOneCompleteVideoPerInput(approach: String) async throws {
        let scratch = try Scratch()
        try inputs(scratch)
        let sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        try scratch.write("wf.json", Self.workflow(api: sandbox.baseURL, approach: approach))
        let result = try await Binary.run(
            ["run", "wf.json"], in: scratch.root, environment: ["CHAIN_TOKEN": Self.token])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        try await expectOneCompleteVideoPerInput(sandbox, scratch)
        let again = try await Binary.run(
            ["run", "wf.json", "--json"], in: scratch.root, environment: ["CHAIN_TOKEN": Self.token])
        #expect(runFinished(again.stdout)?["stagesRun"] == 0)

        // pipeline cancel deletes the item's video; later runs leave it alone until --reprocess makes a new one.
        let cancel = try await Binary.run(
            ["cancel", "wf.json", "clip-no-audio.mp4"], in: scratch.root, environment: ["CHAIN_TOKEN": Self.token])
        #expect(cancel.status == 0, "\(cancel.stdout)\(cancel.stderr)")
        let remaining = try await sandbox.videos(token: Self.token).compactMap { $0["name"]?.stringValue }.sorted()
        #expect(remaining == ["clip-h264-aac", "clip-portrait-rotated"])
        let status = try await Binary.run(["status"], in: scratch.root)
        #expect(status.stdout.contains("clip-no-audio.mp4          cancelled"), "\(status.stdout)")
        let unknown = try await Binary.run(
            ["cancel", "wf.json", "clip-no-audoi.mp4"], in: scratch.root, environment: ["CHAIN_TOKEN": Self.token])
        #expect(unknown.status == 2 && unknown.stderr.contains("no item clip-no-audoi.mp4"))
        let rerun = try await Binary.run(
            ["run", "wf.json"], in: scratch.root, environment: ["CHAIN_TOKEN": Self.token])
        #expect(rerun.status == 0 && rerun.stdout.contains("clip-no-audio.mp4: skipped: cancelled"), "\(rerun.stdout)")
        #expect(try await sandbox.videos(token: Self.token).count == 2)
        let reprocess = try await Binary.run(
            ["run", "wf.json", "--reprocess", "--input", "in/clip-no-audio.mp4"], in: scratch.root,
            environment: ["CHAIN_TOKEN": Self.token])
        #expect(reprocess.status == 0, "\(reprocess.stdout)\(reprocess.stderr)")
        try await expectOneCompleteVideoPerInput(sandbox, scratch)
        await sandbox.stop()
    }

    @Test func theThumbnailBecomesTheVideosActivePicture() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: repositoryRoot.appendingPathComponent("samples/clip-h264-aac.mp4"), to: scratch.path("in/clip.mp4"))
        let sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        let api = sandbox.baseURL
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "picture", "inputs": {"path": "in"},
             "stages": [
              {"id": "ticket", "uses": "vimeo.ticket", "with": {"api": "\(api)", "token": "${env.CHAIN_TOKEN}", "name": "${input.stem}"}},
              {"id": "upload", "uses": "tus.upload", "with": {"url": "${ticket.uploadLink}"}},
              {"id": "activate", "uses": "vimeo.activate", "with": {"api": "\(api)", "token": "${env.CHAIN_TOKEN}", "ticket": "${ticket}"}},
              {"id": "thumbnail", "uses": "ffmpeg.thumbnail", "with": {"output": "out/${input.stem}.jpg", "maxWidth": 320}},
              {"id": "picture", "uses": "vimeo.picture", "with": {"api": "\(api)", "token": "${env.CHAIN_TOKEN}",
                "uri": "${ticket.uri}", "file": "${thumbnail.path}"}}
             ]}
            """)
        let environment = ["CHAIN_TOKEN": Self.token]
        let result = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let video = try #require(try await sandbox.videos(token: Self.token).first)
        let uri = try #require(video["uri"]?.stringValue)
        let picture = video["pictures"] ?? .null
        #expect(picture["active"] == true, "the video's picture: \(picture)")
        let pictures = try JSONValue(parsing: await httpGet("\(api)\(uri)/pictures", bearer: Self.token))
        #expect(pictures["total"] == 1)
        let pictureID = picture["uri"]?.stringValue?.split(separator: "/").last.map(String.init) ?? ""
        let stored = await httpGet("\(api)/sandbox/pictures/\(pictureID)/sha256")
        #expect(
            stored.trimmingCharacters(in: .whitespacesAndNewlines)
                == (await sha256sum(scratch.path("out/clip.jpg").path)))
        let again = try await Binary.run(["run", "wf.json", "--json"], in: scratch.root, environment: environment)
        #expect(runFinished(again.stdout)?["stagesRun"] == 0)
        await sandbox.stop()
    }

    @Test func killNineAcrossTheChainLeavesExactlyOneVideoPerInput() async throws {
        let scratch = try Scratch()
        try inputs(scratch)
        let sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        try scratch.write("wf.json", Self.workflow(api: sandbox.baseURL, approach: "tus"))
        let environment = ["CHAIN_TOKEN": Self.token]
        let random = SeededRandom("killNineAcrossTheChainLeavesExactlyOneVideoPerInput")
        let traffic = SandboxTraffic(sandbox)
        let state = scratch.path(".pipeline")
        var kills = 0
        for round in 0..<10 {
            // Every third round the platform answers slowly, so some kills land just after a request (the
            // ticket's POST among them) went out and before its answer came back.
            let latency = round % 3 == 0 ? 0.4 : 0
            _ = await httpPost("\(sandbox.baseURL)/sandbox/faults", json: #"{"latency": \#(latency)}"#)
            // The moment, chosen by the seed: the first of the n-th stage attempt of this run starting, the
            // m-th request of this run reaching the sandbox, or b upload bytes of it arriving there. A run gets
            // about one stage or 64 KiB of upload further, so ten runs do not finish the chain.
            let starts = random.int(in: 1...2)
            let requests = random.int(in: 1...3)
            let bytes = random.int(in: 1...64) << 10
            let attempts = await Self.stageAttempts(under: state)
            let before = try #require(await traffic.read(), "the sandbox's stats")
            let process = try Binary.start(
                ["run", "wf.json", "--bwlimit", "60KiB"], in: scratch.root, environment: environment)
            try await waitUntil("round \(round): \(starts) stage starts, \(requests) requests or \(bytes) bytes") {
                guard process.isRunning else { return true }
                if await Self.attemptsBegun(under: state, since: attempts) >= starts { return true }
                guard let now = await traffic.read() else { return false }
                return now.requests - before.requests >= requests || now.bytes - before.bytes >= bytes
            }
            if process.isRunning {
                process.signal(SIGKILL)
                kills += 1
            }
            _ = await process.exit()
        }
        #expect(kills >= 8, "only \(kills) kills landed")
        _ = await httpPost("\(sandbox.baseURL)/sandbox/faults", json: #"{"latency": 0}"#)
        let finish = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: environment)
        #expect(finish.status == 0, "\(finish.stdout)\(finish.stderr)")
        try await expectOneCompleteVideoPerInput(sandbox, scratch)
        await sandbox.stop()
    }

    /// The attempts on record, per item and stage of the chain.
    static func stageAttempts(under state: URL) async -> [String: Int] {
        var attempts: [String: Int] = [:]
        for (item, stages) in await stageCheckpoints(under: state, workflow: "chain-tus") {
            for (stage, checkpoint) in stages {
                attempts["\(item)/\(stage)"] = checkpoint["attempts"]?.intValue ?? 0
            }
        }
        return attempts
    }

    /// The stage attempts begun since `before` was read (a stage that starts over counts anew).
    static func attemptsBegun(under state: URL, since before: [String: Int]) async -> Int {
        await stageAttempts(under: state).reduce(0) { count, entry in
            let previous = before[entry.key] ?? 0
            return count + (entry.value >= previous ? entry.value - previous : entry.value)
        }
    }

    @Test func theChainCompletesWithErrorsDropsAndExpiringTokens() async throws {
        let scratch = try Scratch()
        try inputs(scratch)
        let faults = SandboxFaults(errorRate: 0.1, seed: 7, dropAfterBytes: 100_000, dropRate: 0.3, tokenLifetime: 0.5)
        let sandbox = try await SandboxServer.start(
            SandboxConfiguration(dataFolder: scratch.path("sandbox").path, faults: faults))
        try scratch.write("wf.json", Self.workflow(api: sandbox.baseURL, approach: "tus", withAuth: true))
        let result = try await Binary.run(["run", "wf.json", "--bwlimit", "200KiB"], in: scratch.root)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.contains("credentials expired; renewing them with stage auth"),
            "the token never expired: \(result.stdout)")
        _ = await httpPost("\(sandbox.baseURL)/sandbox/faults", json: #"{"errorRate": 0}"#)
        try await expectOneCompleteVideoPerInput(sandbox, scratch)
        for (name, text) in scratch.allFiles(under: ".pipeline") {
            #expect(!text.contains("\"access_token\""), "a token in \(name)")
        }
        await sandbox.stop()
    }

    @Test(arguments: [
        ("no-upload-link", "the answer has no upload.upload_link"),
        ("html", "the answer is not a JSON object: <html><body><h1>502 Bad Gateway</h1></body></html>"),
        ("error-body", "the answer has no uri"),
    ])
    func malformedPlatformAnswersAreClearErrors(mode: String, message: String) async throws {
        let scratch = try Scratch()
        let platform = try await PeerServer(script: "bad_platform.py", arguments: [mode])
        try scratch.write("in/a.mp4", "not used")
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "bad", "inputs": {"path": "in"}, "defaults": {"retry": {"attempts": 1}}, "stages": [
              {"id": "ticket", "uses": "vimeo.ticket", "with": {"api": "http://127.0.0.1:\(platform.port)", "token": "t0k3n-value"}}
            ]}
            """)
        let result = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(result.status == 1)
        #expect(
            result.stdout.contains("invalid response: creating the video (POST /me/videos): \(message)"),
            "\(result.stdout)")
        #expect(!result.stderr.contains("Fatal error"))
    }

    @Test func anotherPlatformInWorkflowJSONAlone() async throws {
        let scratch = try Scratch()
        let sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        let workflow = repositoryRoot.appendingPathComponent("Workflows/generic-platform.json").path
        let result = try await Binary.run(
            [
                "run", workflow, "--input", repositoryRoot.appendingPathComponent("samples").path, "--var",
                "api=\(sandbox.baseURL)", "--json",
            ],
            in: scratch.root, environment: ["PLATFORM_TOKEN": Self.token])
        #expect(result.status == 0, "\(result.stdout.suffix(3000))\(result.stderr)")
        let items = await ledgerEntries(under: scratch.path(".pipeline"), workflow: "generic-platform")
        #expect(items.count == 3)
        for item in items {
            let complete = item.stages["complete"]?["outputs"]
            let describe = item.stages["describe"]?["outputs"]
            #expect(complete?["status"] == "ready")
            #expect(complete?["sha256"]?.stringValue == (await sha256sum(item.path)))
            #expect(describe?["title"]?.stringValue.map { item.path.contains($0) } == true)
        }
        await sandbox.stop()
    }
}
