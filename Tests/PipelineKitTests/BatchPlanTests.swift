import Foundation
import TestSupport
import Testing

@testable import PipelineKit
@testable import StageKit

/// Discovery, metadata and the planner's decisions, without running stages.
@Suite struct BatchPlanTests {
    private func folder() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("plan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }

    private func write(_ text: String, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    @Test func sidecarsAndTheManifestBecomeMetadataAndSidecarsAreNotItems() throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        try write("a", to: root.appendingPathComponent("in/a.mp4"))
        try write(#"{"title": "From the sidecar"}"#, to: root.appendingPathComponent("in/a.mp4.json"))
        try write("b", to: root.appendingPathComponent("in/b.mov"))
        try write(#"{"title": "Stem sidecar", "year": 2020}"#, to: root.appendingPathComponent("in/b.json"))
        try write("c", to: root.appendingPathComponent("in/c.mp4"))
        try write("d", to: root.appendingPathComponent("in/d.mp4"))
        try write("not json", to: root.appendingPathComponent("in/d.mp4.json"))
        let manifestFile = root.appendingPathComponent("meta.csv")
        try write(
            "\u{FEFF}file,title,note\r\na.mp4,From the manifest,\"kept, with a comma\"\r\nc.mp4,\"Say \"\"hi\"\"\",\r\n",
            to: manifestFile)
        let manifest = try InputManifest(contentsOf: manifestFile)
        let discovery = try InputDiscovery.discover(
            paths: [root.appendingPathComponent("in").path], include: [], exclude: [], recursive: false,
            manifest: manifest)
        let meta = Dictionary(uniqueKeysWithValues: discovery.files.map { ($0.input.name, $0.input.meta) })
        #expect(meta["a.mp4"] == ["title": "From the sidecar", "note": "kept, with a comma"])
        #expect(meta["b.mov"] == ["title": "Stem sidecar", "year": 2020])
        #expect(meta["c.mp4"] == ["title": "Say \"hi\"", "note": ""])
        #expect(meta["d.mp4"] == nil)
        let passed = Dictionary(
            uniqueKeysWithValues: discovery.passedOver.map {
                (($0.path as NSString).lastPathComponent, $0.reason.description)
            })
        #expect(passed["a.mp4.json"] == "sidecar (the metadata of a.mp4)")
        #expect(passed["b.json"] == "sidecar (the metadata of b.mov)")
        #expect(passed["d.mp4"]?.contains("is not valid JSON") == true, "\(passed)")
    }

    @Test func aManifestWithoutAFileColumnOrWithRaggedRowsIsRefused() throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let noColumn = root.appendingPathComponent("a.csv")
        try write("name,title\nx,y\n", to: noColumn)
        #expect(throws: InputError.self) { try InputManifest(contentsOf: noColumn) }
        let ragged = root.appendingPathComponent("b.csv")
        try write("file,title\nx\n", to: ragged)
        let error = try #require(throws: InputError.self) { try InputManifest(contentsOf: ragged) }
        #expect(error.message.contains("row 2"))
        let json = root.appendingPathComponent("c.json")
        try write(#"{"x.mp4": {"title": "X"}}"#, to: json)
        #expect(try InputManifest(contentsOf: json).fields(for: "sub/x.mp4", name: "x.mp4") == ["title": "X"])
    }

    @Test func sizeLimitsSkipWithTheReasonBeforeAnythingIsRead() async throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        try write(String(repeating: "x", count: 10), to: root.appendingPathComponent("in/small.txt"))
        try write(String(repeating: "x", count: 1000), to: root.appendingPathComponent("in/fits.txt"))
        try write(String(repeating: "x", count: 100_000), to: root.appendingPathComponent("in/large.txt"))
        let discovery = try InputDiscovery.discover(
            paths: [root.appendingPathComponent("in").path], include: [], exclude: [], recursive: false)
        let planner = BatchPlanner(
            method: .sampled, digest: "d", limits: InputLimits(minSize: 100, maxSize: 10_000))
        let plan = try await planner.plan(discovery, store: nil, workflow: "t")
        let actions = Dictionary(uniqueKeysWithValues: plan.items.map { ($0.input.name, $0.action) })
        guard case .skip(let small) = actions["small.txt"], case .skip(let large) = actions["large.txt"],
            case .run = actions["fits.txt"]
        else {
            Issue.record("unexpected plan: \(actions)")
            return
        }
        #expect(small.description.hasPrefix("smaller than inputs.limits.minSize"))
        #expect(large.description.hasPrefix("larger than inputs.limits.maxSize"))
        #expect(plan.cacheEntries.count == 1, "only the file within the limits is fingerprinted")
    }

    /// A file outside the media limits is skipped with the limit; one FFmpeg cannot read is damaged when its name
    /// says media (its item fails, unless `inputs.damaged` skips it) and only not media when it does not.
    @Test(arguments: DamagedInputPolicy.allCases)
    func mediaLimitsAndUnreadableMediaUseTheProbe(damaged: DamagedInputPolicy) async throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        for name in ["short.mp4", "long.mp4", "webm.webm", "broken.mp4", "notes.dat"] {
            try write(name, to: root.appendingPathComponent("in/\(name)"))
        }
        let discovery = try InputDiscovery.discover(
            paths: [root.appendingPathComponent("in").path], include: [], exclude: [], recursive: false)
        let facts: [String: MediaProbeResult] = [
            "short.mp4": .facts(MediaFacts(duration: 5, container: "mov,mp4,m4a", videoCodec: "h264")),
            "long.mp4": .facts(MediaFacts(duration: 7200, container: "mov,mp4,m4a", videoCodec: "h264")),
            "webm.webm": .facts(MediaFacts(duration: 5, container: "matroska,webm", videoCodec: "vp9")),
            "broken.mp4": .unreadable("moov atom not found"),
        ]
        let planner = BatchPlanner(
            method: .sampled, digest: "d",
            limits: InputLimits(maxDuration: 3600, containers: ["mp4"]), needsMedia: true,
            prober: { path in facts[(path as NSString).lastPathComponent] ?? .unreadable("Invalid data found") },
            damaged: damaged)
        let plan = try await planner.plan(discovery, store: nil, workflow: "t")
        var reasons: [String: String] = [:]
        var damage: [String: String] = [:]
        for item in plan.items {
            if case .skip(let reason) = item.action { reasons[item.input.name] = reason.description }
            if let reason = item.damage { damage[item.input.name] = reason }
        }
        #expect(reasons["short.mp4"] == nil)
        #expect(reasons["long.mp4"]?.hasPrefix("longer than inputs.limits.maxDuration") == true)
        #expect(reasons["webm.webm"]?.hasPrefix("container matroska,webm is not one of") == true)
        #expect(reasons["notes.dat"] == "not media FFmpeg can read: Invalid data found")
        if damaged == .skip {
            #expect(reasons["broken.mp4"] == "not media FFmpeg can read: moov atom not found")
            #expect(damage.isEmpty)
        } else {
            #expect(reasons["broken.mp4"] == nil)
            #expect(damage == ["broken.mp4": "moov atom not found"])
            #expect(plan.runnable.contains { $0.input.name == "broken.mp4" })
        }
        #expect(plan.cacheEntries.allSatisfy { $0.media != nil })
    }

    /// Whether a name says media: by its extension, in any case.
    @Test func aNameClaimsMediaByItsExtension() {
        #expect(MediaFileName.claimsMedia("/a/clip.MP4") && MediaFileName.claimsMedia("b.mkv"))
        #expect(!MediaFileName.claimsMedia("notes.txt") && !MediaFileName.claimsMedia("mp4"))
        #expect(!MediaFileName.claimsMedia("/a.mp4/readme"))
    }

    /// Decisions that need the whole batch hold when its files fall into different chunks: content moved to a
    /// later chunk keeps its item while its old path holds new content, and a content found twice belongs to
    /// the path the ledger knows it by, wherever that is.
    @Test func movesAndCopiesAcrossChunksAreDecidedForTheWholeBatch() async throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let input = root.appendingPathComponent("in")
        func file(_ name: String) -> URL { input.appendingPathComponent(name) }
        let planner = { () -> BatchPlanner in
            var planner = BatchPlanner(method: .sampled, digest: "d")
            planner.chunkSize = 2
            return planner
        }()
        // The ledger knows a.txt ("one"), e.txt ("five") and d.txt ("dup"), all done.
        for (name, text) in [("a.txt", "one"), ("e.txt", "five"), ("d.txt", "dup")] { try write(text, to: file(name)) }
        let ledger = try SQLiteLedger(folder: root.appendingPathComponent("state"))
        defer { try? ledger.close() }
        let first = try await planner.plan(
            try InputDiscovery.discover(paths: [input.path], include: [], exclude: [], recursive: false),
            store: ledger, workflow: "t")
        try await ledger.cacheFingerprints(first.cacheEntries)
        for planned in first.items {
            let admission = try #require(planned.admission)
            let admitted = try await ledger.admit(admission, workflow: "t")
            try await ledger.finish(
                admitted.ref,
                result: ItemResult(
                    ref: admitted.ref, fingerprint: planned.fingerprint, path: planned.input.path, outcome: .done),
                digest: "d")
        }
        // "one" moves from a.txt to e.txt (the last chunk) and a.txt gets new content; "five" moves to c.txt;
        // b.txt is a copy of d.txt's content.
        try FileManager.default.removeItem(at: file("e.txt"))
        try FileManager.default.moveItem(at: file("a.txt"), to: file("e.txt"))
        for (name, text) in [("a.txt", "new"), ("b.txt", "dup"), ("c.txt", "five")] { try write(text, to: file(name)) }
        let plan = try await planner.plan(
            try InputDiscovery.discover(paths: [input.path], include: [], exclude: [], recursive: false),
            store: ledger, workflow: "t")
        let actions = Dictionary(uniqueKeysWithValues: plan.items.map { ($0.input.name, $0.action) })
        #expect(actions["a.txt"] == .run(.new), "a.txt's old content is at e.txt: its new content is a new item")
        #expect(actions["b.txt"] == .skip(reason: .sameContent(as: file("d.txt").path)))
        guard case .reuse(_, let moved) = actions["c.txt"], case .reuse(_, let renamed) = actions["e.txt"],
            case .reuse(_, let done) = actions["d.txt"]
        else {
            Issue.record("c.txt, d.txt and e.txt should be done: \(actions)")
            return
        }
        #expect(moved.description == "done (as \(file("e.txt").path))")
        #expect(renamed.description == "done (as \(file("a.txt").path))")
        #expect(done.description == "done")
    }
}
