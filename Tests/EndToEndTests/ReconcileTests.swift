import Foundation
import Sandbox
import StageKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Creates against a platform that, like Vimeo, ignores `Idempotency-Key`, answers creates late and lists new
/// objects late: whatever the moment of a kill -9, a rerun adopts the object the unanswered create made
/// instead of making a second one (`vimeo.ticket`, and `http.request` with `reconcile`).
@Suite struct ReconcileTests {
    static let token = "sandbox-token"
    static let stems = (1...5).map { "clip\($0)" }

    static func vimeoWorkflow(api: String) -> String {
        """
        {"version": 1, "name": "reconcile", "inputs": {"path": "in"},
         "defaults": {"retry": {"attempts": 8, "initialDelay": "100ms", "maxDelay": "1s"}},
         "stages": [
          {"id": "ticket", "uses": "vimeo.ticket", "with": {"api": "\(api)", "token": "${env.TOKEN}",
            "name": "${input.stem}", "reconcileWait": "3s"}},
          {"id": "upload", "uses": "tus.upload", "with": {"url": "${ticket.uploadLink}", "chunkSize": "16KiB"}},
          {"id": "activate", "uses": "vimeo.activate", "with": {"api": "\(api)", "token": "${env.TOKEN}", "ticket": "${ticket}"}}
         ]}
        """
    }

    static func genericWorkflow(api: String) -> String {
        """
        {"version": 1, "name": "reconcile", "inputs": {"path": "in"},
         "defaults": {"retry": {"attempts": 8, "initialDelay": "100ms", "maxDelay": "1s"}},
         "stages": [
          {"id": "asset", "uses": "http.request", "with": {"method": "POST", "url": "\(api)/generic/assets",
            "headers": {"Authorization": "Bearer ${env.TOKEN}"}, "json": {"name": "${input.stem}", "size": "${input.size}"},
            "outputs": {"id": "/id", "url": "/upload_url"},
            "reconcile": {"url": "\(api)/generic/assets?name=${input.stem}", "match": {"/name": "${input.stem}"}, "wait": "3s"}}},
          {"id": "upload", "uses": "http.upload", "with": {"url": "${asset.url}", "chunkSize": "16KiB"}},
          {"id": "complete", "uses": "http.request", "with": {"method": "POST", "url": "\(api)/generic/assets/${asset.id}/complete",
            "headers": {"Authorization": "Bearer ${env.TOKEN}"}}}
         ]}
        """
    }

    @Test func killsAroundTheCreateLeaveExactlyOneVideoPerInput() async throws {
        try await killAroundCreates(
            Self.vimeoWorkflow, created: { $0.videos }, seed: "killsAroundTheCreateLeaveExactlyOneVideoPerInput"
        ) { sandbox in
            let listing = await httpGet("\(sandbox.baseURL)/me/videos?per_page=100", bearer: Self.token)
            let videos = try JSONValue(parsing: listing)["data"]?.arrayValue ?? []
            return videos.map { ($0["name"]?.stringValue ?? "", $0["upload"]?["status"] == "complete") }
        }
    }

    @Test func killsAroundAGenericCreateLeaveExactlyOneAssetPerInput() async throws {
        try await killAroundCreates(
            Self.genericWorkflow, created: { $0.assets }, seed: "killsAroundAGenericCreateLeaveExactlyOneAssetPerInput"
        ) { sandbox in
            let listing = await httpGet("\(sandbox.baseURL)/generic/assets", bearer: Self.token)
            let assets = try JSONValue(parsing: listing)["data"]?.arrayValue ?? []
            return assets.map { ($0["name"]?.stringValue ?? "", $0["status"] == "ready") }
        }
    }

    /// Runs `workflow` over five inputs, killing it ten times at seeded moments around its creates, then to
    /// the end; `objects` lists what the platform holds as (name, complete).
    private func killAroundCreates(
        _ workflow: (String) -> String,
        created count: @escaping @Sendable (SandboxTraffic.Counts) -> Int,
        seed: String,
        objects: (RunningSandbox) async throws -> [(name: String, complete: Bool)]
    ) async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        for (index, stem) in Self.stems.enumerated() {
            try scratch.write("in/\(stem).mp4", String(repeating: "clip \(index) ", count: 20_000))
        }
        let sandbox = try await SandboxServer.start(SandboxConfiguration(dataFolder: scratch.path("sandbox").path))
        try scratch.write("wf.json", workflow(sandbox.baseURL))
        let environment = ["TOKEN": Self.token]
        _ = await httpPost(
            "\(sandbox.baseURL)/sandbox/faults",
            json: #"{"ignoreIdempotencyKeys": true, "createDelay": 0.6, "listingLag": 0.8}"#)
        let random = SeededRandom(seed)
        let traffic = SandboxTraffic(sandbox)
        var kills = 0
        for round in 0..<10 {
            // The moment, chosen by the seed: while a create is under way (its object made, its answer not yet
            // sent; or after six requests, when this run creates nothing), or after the n-th request of this
            // run reached the sandbox. Uploads go in 16 KiB pieces, so ten runs cannot finish the batch.
            let inTheWindow = random.int(in: 0...1) == 0
            let requests = random.int(in: 1...4)
            let before = try #require(await traffic.read(), "the sandbox's stats")
            let process = try Binary.start(["run", "wf.json"], in: scratch.root, environment: environment)
            let moment = inTheWindow ? "an object is created" : "\(requests) requests"
            try await waitUntil("round \(round): \(moment)") {
                guard process.isRunning else { return true }
                guard let now = await traffic.read() else { return false }
                let sent = now.requests - before.requests
                return inTheWindow ? count(now) > count(before) || sent >= 6 : sent >= requests
            }
            if process.isRunning {
                process.signal(SIGKILL)
                kills += 1
            }
            _ = await process.exit()
        }
        #expect(kills >= 8, "only \(kills) kills landed")
        _ = await httpPost(
            "\(sandbox.baseURL)/sandbox/faults", json: #"{"ignoreIdempotencyKeys": true, "listingLag": 0.8}"#)
        let finish = try await Binary.run(["run", "wf.json"], in: scratch.root, environment: environment)
        #expect(finish.status == 0, "\(finish.stdout)\(finish.stderr)")

        let held = try await objects(sandbox)
        let names = held.map { $0.name }
        #expect(held.count == Self.stems.count, "\(names)")
        for stem in Self.stems {
            let matching = held.filter { $0.name == stem }
            #expect(matching.count == 1, "\(stem): \(matching.count) objects")
            let complete = matching.allSatisfy { $0.complete }
            #expect(complete, "\(stem): an object left empty")
        }
        await sandbox.stop()
    }
}
