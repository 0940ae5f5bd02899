import Foundation
import Logging
import PipelineKit
import PluginHost
import StageKit
import StageRuntime
import TestSupport
import Testing

@testable import PipelineCLI

#if canImport(Glibc)
    import Glibc
#endif

/// Stages from outside the project: a dynamically loaded plugin (samples/plugin-hello) and a custom
/// executable with compiled-in stages (samples/custom-pipeline). This package builds the samples' sources
/// beside `pipeline` (targets `SampleHelloPlugin` and `SampleCustomPipeline`); a user builds them with the
/// samples' own manifests, which `theSampleManifestsAskOnlyForProductsTheirPackagesDeclare` checks.
@Suite struct PluginTests {
    static let plugin = Binary.url.deletingLastPathComponent().appendingPathComponent("libSampleHelloPlugin.so")
    static let customPipeline = Binary.url.deletingLastPathComponent().appendingPathComponent(
        "SampleCustomPipeline")

    private func requireBuilt(_ url: URL) throws {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw PeerError(message: "\(url.path) is missing: `swift build --build-tests` builds the samples")
        }
    }

    @Test func aPluginStageRunsChecksPointsAndResumesAfterKillNine() async throws {
        try requireBuilt(Self.plugin)
        let scratch = try Scratch()
        try scratch.write("in/a.txt", "a")
        try scratch.write("in/b.txt", "b")
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "hello", "plugins": ["\(Self.plugin.path)"], "inputs": {"path": "in"}, "stages": [
              {"id": "greet", "uses": "hello.greet", "with": {"name": "${input.stem}", "output": "out/${input.stem}.txt", "steps": 12, "pause": 0.1}},
              {"id": "after", "uses": "exec", "with": {"command": ["sh", "-c", "echo ${greet.lines} >> after.log"]}}
            ]}
            """)
        #expect(try await Binary.run(["validate", "wf.json"], in: scratch.root).status == 0)
        // Kill once a seeded item has checkpointed a seeded number of its 12 lines, three pauses or more
        // before its last.
        let random = SeededRandom("aPluginStageRunsChecksPointsAndResumesAfterKillNine")
        let item = random.int(in: 0...1) == 0 ? "a.txt" : "b.txt"
        let written = random.int(in: 1...9)
        let state = scratch.path(".pipeline")
        let first = try Binary.start(["run", "wf.json"], in: scratch.root)
        try await waitUntil("\(item) checkpointed \(written) lines") {
            guard first.isRunning else { return true }
            return await stageCheckpoints(under: state, workflow: "hello").contains { key, checkpoints in
                key == item && (checkpoints["greet"]?["resume"]?["written"]?.intValue ?? 0) >= written
            }
        }
        #expect(first.isRunning, "the run ended before \(item) wrote \(written) lines")
        first.signal(SIGKILL)
        _ = await first.exit()
        let resumed = try await Binary.run(["run", "wf.json", "--verbose"], in: scratch.root)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(resumed.stdout.contains("resuming at line"), "\(resumed.stdout)")
        // hello.greet declares no landing: the convention finds its `path` output, as before stages declared one, so
        // a plugin rebuilt without a change keeps its `→ …`.
        let stem = item.replacingOccurrences(of: ".txt", with: "")
        let landed = resumed.stdout.split(separator: "\n").first { $0.contains("✓ \(item) → ") }
        #expect(landed?.hasSuffix("out/\(stem).txt") == true, "\(resumed.stdout)")
        for name in ["a", "b"] {
            let lines = scratch.read("out/\(name).txt").split(separator: "\n")
            #expect(lines.count == 12 && Set(lines).count == 12, "\(name): \(lines)")
        }
        #expect(scratch.read("after.log").split(separator: "\n") == ["12", "12"])
        let stages = try await Binary.run(["stages", "--plugin", Self.plugin.path], in: scratch.root)
        #expect(stages.stdout.contains("hello.greet  [plugin \(Self.plugin.path)]"))
    }

    /// `--plugin NAME.so` names the file in the current folder, as any relative path does (dlopen alone would look
    /// a bare name up on the library path and not find it).
    @Test func aPluginNamedWithoutAFolderIsTheFileInTheCurrentFolder() async throws {
        try requireBuilt(Self.plugin)
        let name = Self.plugin.lastPathComponent
        let stages = try await Binary.run(["stages", "--plugin", name], in: Self.plugin.deletingLastPathComponent())
        #expect(stages.status == 0, "\(stages.stderr)")
        #expect(stages.stdout.contains("hello.greet  [plugin \(name)]"), "\(stages.stdout)")
    }

    /// A plugin path is opened as the file system reads it, the file `fileExists` found: through a symbolic link
    /// and `..`, which lead elsewhere than the same path with `..` removed as text.
    @Test func aPluginPathThroughALinkAndDotDotIsTheFileItNames() async throws {
        try requireBuilt(Self.plugin)
        let scratch = try Scratch()
        let files = FileManager.default
        try files.createDirectory(at: scratch.path("deep/inner"), withIntermediateDirectories: true)
        try files.createSymbolicLink(at: scratch.path("link"), withDestinationURL: scratch.path("deep/inner"))
        try files.createSymbolicLink(
            at: scratch.path("deep/\(Self.plugin.lastPathComponent)"), withDestinationURL: Self.plugin)
        // `link/..` is `deep`, where the plugin is; as text it is the scratch folder, where it is not.
        let path = "link/../\(Self.plugin.lastPathComponent)"
        #expect(!files.fileExists(atPath: scratch.path(Self.plugin.lastPathComponent).path))
        let stages = try await Binary.run(["stages", "--plugin", path], in: scratch.root)
        #expect(stages.status == 0, "\(stages.stderr)")
        #expect(stages.stdout.contains("hello.greet  [plugin \(path)]"), "\(stages.stdout)")
    }

    @Test func timeoutsAndRetriesApplyToPluginStagesAsToBuiltInOnes() async throws {
        try requireBuilt(Self.plugin)
        let scratch = try Scratch()
        try scratch.write("in/a.txt", "a")
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "hello-timeout", "plugins": ["\(Self.plugin.path)"], "inputs": {"path": "in"}, "stages": [
              {"id": "greet", "uses": "hello.greet", "timeout": "300ms", "retry": {"attempts": 2, "initialDelay": "10ms"},
               "with": {"name": "slow", "output": "out/a.txt", "steps": 5, "pause": 1}}
            ]}
            """)
        let process = try Binary.start(["run", "wf.json"], in: scratch.root)
        // The run ends: no bound on how soon (a loaded machine may take its time), only the safety limit.
        try await waitUntil("the run with timed-out plugin stages ends") { !process.isRunning }
        let status = await process.exit()
        let stdout = await process.stdout.text()
        #expect(status == 1)
        #expect(stdout.contains("attempt 1 of 2 failed (timeout): timed out after 300ms; retrying"), "\(stdout)")
        #expect(stdout.contains("failed after 2 attempts: timed out after 300ms"), "\(stdout)")
        // The timeout cancelled the plugin's run across the C boundary, in its first 1 s pause: neither
        // attempt wrote a line, and both are on record.
        #expect(scratch.read("out/a.txt").split(separator: "\n").isEmpty, "\(scratch.read("out/a.txt"))")
        let item = try #require(
            await stageCheckpoints(under: scratch.path(".pipeline"), workflow: "hello-timeout").first)
        #expect(item.value["greet"]?["status"] == "failed")
        #expect(item.value["greet"]?["attempts"] == 2)
    }

    /// The most `hello.send` requests a journal shows running at once.
    private func mostAtOnce(in journal: String) -> Int {
        var (running, most) = (0, 0)
        for line in journal.split(separator: "\n") {
            running += line.hasPrefix("start ") ? 1 : -1
            most = max(most, running)
        }
        return most
    }

    @Test func pluginTransferStagesAreBoundedByTransfers() async throws {
        try requireBuilt(Self.plugin)
        let scratch = try Scratch()
        for name in ["a", "b", "c", "d"] { try scratch.write("in/\(name).txt", name) }
        for transfers in [1, 2] {
            // Two network stages per item, four items at once: only `--transfers` keeps them apart. Each request
            // takes long enough that items starting together overlap unless a slot holds them back.
            try scratch.write(
                "wf\(transfers).json",
                """
                {"version": 1, "name": "send\(transfers)", "plugins": ["\(Self.plugin.path)"], "inputs": {"path": "in"}, "stages": [
                  {"id": "first", "uses": "hello.send", "with": {"file": "${input.path}", "to": "out\(transfers)/first", "pause": 0.3, "journal": "journal\(transfers).log"}},
                  {"id": "second", "uses": "hello.send", "with": {"file": "${input.path}", "to": "out\(transfers)/second", "pause": 0.3, "journal": "journal\(transfers).log"}}
                ]}
                """)
            let result = try await Binary.run(
                ["run", "wf\(transfers).json", "--jobs", "4", "--transfers", "\(transfers)"], in: scratch.root)
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            let journal = scratch.read("journal\(transfers).log")
            #expect(journal.split(separator: "\n").count == 16, "\(journal)")
            #expect(mostAtOnce(in: journal) == transfers, "--transfers \(transfers):\n\(journal)")
            #expect(scratch.allFiles(under: "out\(transfers)").count == 8)
        }
    }

    @Test func aPluginStageThatRetriesItselfIsAttemptedOnceByTheEngine() async throws {
        try requireBuilt(Self.plugin)
        let scratch = try Scratch()
        try scratch.write("in/a.txt", "a")
        // Every request fails retryably: the stage makes the policy's 4 requests (not the standard 3, so the
        // policy crossed the boundary), and the engine does not run it again.
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "self-retry", "plugins": ["\(Self.plugin.path)"], "inputs": {"path": "in"}, "stages": [
              {"id": "send", "uses": "hello.send", "retry": {"attempts": 4, "initialDelay": "10ms", "maxDelay": "20ms"},
               "with": {"file": "${input.path}", "to": "out", "failures": 100, "journal": "journal.log"}}
            ]}
            """)
        let result = try await Binary.run(["run", "wf.json"], in: scratch.root)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let starts = scratch.read("journal.log").split(separator: "\n").filter { $0.hasPrefix("start ") }
        #expect(starts == (1...4).map { "start a.txt attempt 1 request \($0)" }, "\(starts)")
        // The stage's own retries reach the run's output through the host's `retrying` callback.
        for request in 1...3 {
            #expect(
                result.stdout.contains(
                    "attempt \(request) of 4 failed (network): the link dropped during request \(request); retrying"),
                "\(result.stdout)")
        }
        #expect(result.stdout.contains("FAILED: the link dropped during request 4"), "\(result.stdout)")
        let item = try #require(await stageCheckpoints(under: scratch.path(".pipeline"), workflow: "self-retry").first)
        #expect(item.value["send"]?["status"] == "failed")
        #expect(item.value["send"]?["attempts"] == 1)
    }

    @Test func aPluginStagesOutputsDependOnItsOptions() async throws {
        try requireBuilt(Self.plugin)
        let scratch = try Scratch()
        try scratch.write("in/a.txt", "a")
        func workflow(_ with: String) -> String {
            """
            {"version": 1, "name": "receipt", "plugins": ["\(Self.plugin.path)"], "inputs": {"path": "in"}, "stages": [
              {"id": "send", "uses": "hello.send", "with": {"file": "${input.path}", "to": "out"\(with)}},
              {"id": "after", "uses": "exec", "with": {"command": ["sh", "-c", "cat ${send.receipt} > after.txt"]}}
            ]}
            """
        }
        try scratch.write("without.json", workflow(""))
        let refused = try await Binary.run(["validate", "without.json"], in: scratch.root)
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(
            refused.stderr.contains(#"stage "send" (hello.send) has no output "receipt"; it has path, requests"#),
            "\(refused.stderr)")
        try scratch.write("with.json", workflow(#", "receipt": "receipt-${input.stem}.txt""#))
        let validated = try await Binary.run(["validate", "with.json"], in: scratch.root)
        #expect(validated.status == 0, "\(validated.stdout)\(validated.stderr)")
        let ran = try await Binary.run(["run", "with.json"], in: scratch.root)
        #expect(ran.status == 0, "\(ran.stdout)\(ran.stderr)")
        #expect(scratch.read("after.txt").hasSuffix("out/a.txt in 1 requests\n"), "\(scratch.read("after.txt"))")
    }

    /// `hello.follow` declares the follower role: with `"stream": true` it reads a segmented export through the host
    /// while the export writes it, and its copy is the export byte for byte. `hello.send`, which does not follow,
    /// says why in its own words.
    @Test func aPluginStageStreamsAnExportWhileItIsWritten() async throws {
        try requireBuilt(Self.plugin)
        let scratch = try Scratch()
        try await StreamedUploadTests.makeClip(in: scratch)
        func workflow(_ uses: String) -> String {
            """
            {"version": 1, "name": "follow", "plugins": ["\(Self.plugin.path)"], "inputs": {"path": "in"}, "stages": [
              \(StreamedUploadTests.export()),
              {"id": "copy", "uses": "\(uses)", "after": ["export"], "stream": true, "with": {"file": "${export.path}", "to": "copies"}}
            ]}
            """
        }
        try scratch.write("send.json", workflow("hello.send"))
        let refused = try await Binary.run(["validate", "send.json"], in: scratch.root)
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(
            refused.stderr.contains(
                "stages[1].stream: hello.send cannot stream an export: it copies a finished file in one request"),
            "\(refused.stderr)")
        try scratch.write("wf.json", workflow("hello.follow"))
        let validated = try await Binary.run(["validate", "wf.json"], in: scratch.root)
        #expect(validated.status == 0, "\(validated.stdout)\(validated.stderr)")
        let exported = scratch.path("out/clip.mp4").path
        let copy = scratch.path("copies/clip.mp4").path
        let process = try Binary.start(["run", "wf.json"], in: scratch.root)
        // Observed from outside: the copy has bytes while the export's file is not finished (not yet in place).
        try await waitUntil("copied bytes, or the end of the run") {
            guard process.isRunning else { return true }
            return ((try? FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int) ?? 0) > 0
        }
        let copiedEarly = !FileManager.default.fileExists(atPath: exported)
        let status = await process.exit()
        let output = await process.stdout.text() + (await process.stderr.text())
        #expect(status == 0, "\(output)")
        #expect(copiedEarly, "the plugin stage copied nothing before the export was finished")
        #expect(await sha256sum(copy) == sha256sum(exported))
        let checkpoint = await stageCheckpoints(under: scratch.path(".pipeline"), workflow: "follow").first?.value
        let outputs = try #require(checkpoint?["copy"]?["outputs"])
        #expect((outputs["copiedWhileWritten"]?.intValue ?? 0) > 0, "\(outputs)")
        #expect(outputs["path"]?.stringValue?.hasSuffix("copies/clip.mp4") == true, "\(outputs)")
    }

    /// `hello.follow` run in this process through the host, following an export driven by hand: it copies bytes
    /// while they are written, the export writes its file again, and the copy is the finished file with the bytes
    /// copied while written counted (not reset by the rewrite).
    @Test func aPluginFollowerCopiesARewrittenExportAndCountsWhatItCopiedWhileItWasWritten() async throws {
        try requireBuilt(Self.plugin)
        let scratch = try Scratch()
        let follow = try #require(
            try StageCatalog.shipped.registry(plugins: [Self.plugin.path]).descriptor(for: "hello.follow"))
        let (destination, writing) = (scratch.path("out/clip.mp4").path, scratch.path("out/.clip.mp4.partial").path)
        let copy = scratch.path("copies/clip.mp4").path
        let (head, first) = (Data(repeating: 0, count: 16), Data(repeating: 0x61, count: 65536))
        try FileManager.default.createDirectory(at: scratch.path("out"), withIntermediateDirectories: true)
        try (head + first).write(to: URL(fileURLWithPath: writing))
        let export = ExportStream()
        var services = ServiceValues()
        services[FollowedExportKey.self] = export
        let item = InputItem(path: destination, relativePath: "clip.mp4", size: 0, modified: 0)
        let context = StageContext(
            stageID: "copy", stageType: "hello.follow", item: item, attempt: 1, logger: Logger(label: "test"),
            scratchFolder: scratch.path("scratch"), services: services, savedCheckpoint: nil,
            checkpointer: NoCheckpoints(), progress: { _ in })
        let run = Task {
            try await follow.run(
                options: ["file": .string(destination), "to": .string(scratch.path("copies").path)], context: context)
        }
        export.open(destination: destination, writing: writing, head: Int64(head.count))
        export.advance(to: Int64(head.count + first.count))
        try await waitUntil("the first bytes copied") {
            ((try? FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int) ?? 0) >= head.count + first.count
        }
        // The export writes its file again, other bytes, and finishes.
        let finished = Data(repeating: 0x48, count: 16) + Data(repeating: 0x62, count: 100_000)
        export.rewrite()
        try finished.write(to: URL(fileURLWithPath: writing))
        try FileManager.default.moveItem(atPath: writing, toPath: destination)
        export.finish(destination: destination, size: Int64(finished.count))
        let outputs = try await run.value
        #expect(outputs["copiedWhileWritten"]?.intValue == first.count, "\(outputs)")
        #expect(outputs["size"]?.intValue == finished.count, "\(outputs)")
        #expect(FileManager.default.contents(atPath: copy) == finished)
    }

    @Test func aCustomPipelineWithCompiledInStagesResumesAfterKillNine() async throws {
        try requireBuilt(Self.customPipeline)
        let scratch = try Scratch()
        try FileManager.default.createDirectory(at: scratch.path("in"), withIntermediateDirectories: true)
        let file = try await urandomFile(megabytes: 600, in: scratch.path("in"))
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "custom", "inputs": {"path": "in"}, "stages": [
              {"id": "size", "uses": "acme.size", "with": {"file": "${input.path}"}},
              {"id": "hash", "uses": "checksum.blocks", "with": {"sidecar": false}}
            ]}
            """)
        let process = Process()
        process.executableURL = Self.customPipeline
        process.arguments = ["run", "wf.json"]
        process.currentDirectoryURL = scratch.root
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        // Kill once a seeded number of blocks is checkpointed (every 8th is), early: hashing is fast.
        let random = SeededRandom("aCustomPipelineWithCompiledInStagesResumesAfterKillNine")
        let blocks = 8 * random.int(in: 1...4)
        let stateFolder = scratch.path(".pipeline")
        try await waitUntil("\(blocks) blocks checkpointed") {
            guard process.isRunning else { return true }
            let checkpoints = await stageCheckpoints(under: stateFolder, workflow: "custom").values
            return checkpoints.contains { ($0["hash"]?["resume"]?["digests"]?.arrayValue?.count ?? 0) >= blocks }
        }
        kill(pid, SIGKILL)
        await BlockingWork.runLong { process.waitUntilExit() }
        let checkpoint = try #require(
            await stageCheckpoints(under: stateFolder, workflow: "custom").values.first?["hash"])
        let hashedBefore = checkpoint["resume"]?["digests"]?.arrayValue?.count ?? 0
        #expect(hashedBefore > 0 && hashedBefore < 600, "\(hashedBefore) blocks hashed before the kill")

        let rerun = Process()
        rerun.executableURL = Self.customPipeline
        rerun.arguments = ["run", "wf.json", "--json"]
        rerun.currentDirectoryURL = scratch.root
        let pipe = Pipe()
        rerun.standardOutput = pipe
        try rerun.run()
        let handle = pipe.fileHandleForReading
        let output = await BlockingWork.runLong { String(decoding: handle.readDataToEndOfFile(), as: UTF8.self) }
        await BlockingWork.runLong { rerun.waitUntilExit() }
        #expect(rerun.terminationStatus == 0)
        #expect(output.contains("resuming at block \(hashedBefore + 1)"), "\(output.suffix(2000))")
        let state = try #require(await stageCheckpoints(under: stateFolder, workflow: "custom").values.first?["hash"])
        #expect(state["outputs"]?["blocks"] == 600)
        #expect(state["outputs"]?["size"] == .int(600 << 20))
        _ = file
    }

    @Test(arguments: ["docs/writing-a-stage.md", "Sources/StageKit/StageKit.docc/StageKit.md"])
    func theGuidesExampleIsTheStageTheCustomPipelineCompiles(guide: String) throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent(guide), encoding: .utf8)
        let compiled = try String(
            contentsOf: repositoryRoot.appendingPathComponent(
                "samples/custom-pipeline/Sources/custom-pipeline/FileSize.swift"), encoding: .utf8)
        #expect(
            text.contains("```swift\n" + compiled + "```"),
            "\(guide)'s FileSize example differs from the one samples/custom-pipeline builds")
    }

    @Test func theSampleManifestsAskOnlyForProductsTheirPackagesDeclare() async throws {
        let declared = try await PackageManifest.dump(repositoryRoot).products
        let sdk = try await PackageManifest.dump(repositoryRoot.appendingPathComponent("sdk")).products
        #expect(declared.contains("PipelineCLI"), "\(declared)")
        // A plugin asks the SDK package (sdk/), a custom pipeline the whole package.
        for (sample, package, products) in [
            ("plugin-hello", "sdk", sdk), ("custom-pipeline", "media-pipeline", declared),
        ] {
            let wanted = try await PackageManifest.dump(repositoryRoot.appendingPathComponent("samples/\(sample)"))
                .products(from: package)
            #expect(!wanted.isEmpty, "samples/\(sample) asks for no product of \(package)")
            #expect(wanted.isSubset(of: products), "samples/\(sample) asks for \(wanted.subtracting(products))")
        }
    }

    /// Builds a small C library as a "plugin" that is wrong in one way.
    private func cLibrary(_ source: String, in scratch: borrowing Scratch, name: String) async throws -> URL {
        try scratch.write("\(name).c", source)
        let output = scratch.path("lib\(name).so")
        let root = scratch.root
        let status = await BlockingWork.runLong { () -> Int32 in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
            process.arguments = ["-shared", "-fPIC", "-o", output.path, root.appendingPathComponent("\(name).c").path]
            try? process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(status == 0)
        return output
    }

    @Test func unusablePluginsAreRefusedWithAClearMessage() async throws {
        let scratch = try Scratch()
        try scratch.write("wf.json", #"{"version": 1, "stages": [{"id": "a", "uses": "set", "with": {"x": 1}}]}"#)
        let wrongABI = try await cLibrary(
            """
            #include <stdint.h>
            int32_t pipeline_plugin_abi_version(void) { return 999; }
            int32_t pipeline_plugin_register(const void *registrar) { return 0; }
            """, in: scratch, name: "wrongabi")
        // A plugin as PipelinePluginSDK built it for ABI 2: every entry point of that ABI, and the old version.
        let oldABI = try await cLibrary(
            """
            #include <stddef.h>
            #include <stdint.h>
            int32_t pipeline_plugin_abi_version(void) { return 2; }
            int32_t pipeline_plugin_register(const void *registrar) { return 0; }
            void *pipeline_plugin_start(int32_t stage, const char *request, const void *host) { return NULL; }
            void pipeline_plugin_cancel(void *handle) {}
            """, in: scratch, name: "oldabi")
        // A plugin as PipelinePluginSDK built it for ABI 3: told what ABI 4 adds, not what 3 already had.
        let abi3 = try await cLibrary(
            """
            #include <stddef.h>
            #include <stdint.h>
            int32_t pipeline_plugin_abi_version(void) { return 3; }
            int32_t pipeline_plugin_register(const void *registrar) { return 0; }
            void *pipeline_plugin_start(int32_t stage, const char *request, const void *host) { return NULL; }
            void pipeline_plugin_cancel(void *handle) {}
            int32_t pipeline_plugin_outputs(int32_t stage, const char *with, void *context, void *deliver) { return 1; }
            """, in: scratch, name: "abi3")
        // A plugin of this ABI whose stage says it writes a stream, which the ABI has no calls for.
        let producer = try await cLibrary(
            """
            #include <stddef.h>
            #include <stdint.h>
            typedef struct {
                int32_t abi_version;
                void *context;
                int32_t (*register_stage)(void *context, int32_t stage, const char *json);
                void (*fail)(void *context, const char *message);
            } registrar;
            int32_t pipeline_plugin_abi_version(void) { return 4; }
            int32_t pipeline_plugin_register(const registrar *r) {
                return r->register_stage(r->context, 0, "{\\"type\\": \\"c.export\\", \\"summary\\": \\"\\", "
                    "\\"optionSchema\\": {\\"fields\\": []}, \\"outputSchema\\": {\\"fields\\": [], \\"isOpen\\": false}, "
                    "\\"resource\\": \\"cpu\\", \\"readsMediaInput\\": false, \\"retriesItself\\": false, "
                    "\\"streamRole\\": \\"producer\\", \\"inputFileOption\\": null, \\"landingOutput\\": \\"path\\"}");
            }
            void *pipeline_plugin_start(int32_t stage, const char *request, const void *host) { return NULL; }
            void pipeline_plugin_cancel(void *handle) {}
            int32_t pipeline_plugin_outputs(int32_t stage, const char *with, void *context, void *deliver) { return 1; }
            int32_t pipeline_plugin_stream_refusal(
                int32_t stage, const char *with, const char *inputs, void *context, void *deliver) { return 1; }
            """, in: scratch, name: "producer")
        // A plugin of this ABI whose follower names no option for the file it reads.
        let follower = try await cLibrary(
            """
            #include <stddef.h>
            #include <stdint.h>
            typedef struct {
                int32_t abi_version;
                void *context;
                int32_t (*register_stage)(void *context, int32_t stage, const char *json);
                void (*fail)(void *context, const char *message);
            } registrar;
            int32_t pipeline_plugin_abi_version(void) { return 4; }
            int32_t pipeline_plugin_register(const registrar *r) {
                return r->register_stage(r->context, 0, "{\\"type\\": \\"c.follow\\", \\"summary\\": \\"\\", "
                    "\\"optionSchema\\": {\\"fields\\": []}, "
                    "\\"outputSchema\\": {\\"fields\\": [{\\"name\\": \\"url\\", \\"summary\\": \\"\\"}], \\"isOpen\\": false}, "
                    "\\"resource\\": \\"network\\", \\"readsMediaInput\\": false, \\"retriesItself\\": false, "
                    "\\"streamRole\\": \\"follower\\", \\"inputFileOption\\": null, \\"landingOutput\\": \\"url\\"}");
            }
            void *pipeline_plugin_start(int32_t stage, const char *request, const void *host) { return NULL; }
            void pipeline_plugin_cancel(void *handle) {}
            int32_t pipeline_plugin_outputs(int32_t stage, const char *with, void *context, void *deliver) { return 1; }
            int32_t pipeline_plugin_stream_refusal(
                int32_t stage, const char *with, const char *inputs, void *context, void *deliver) { return 1; }
            """, in: scratch, name: "follower")
        let noEntry = try await cLibrary("int unrelated(void) { return 1; }\n", in: scratch, name: "noentry")
        try scratch.write("notalibrary.so", "this is text, not a shared library\n")
        let cases: [(String, String)] = [
            (
                oldABI.path,
                "was built for plugin ABI 2, but this pipeline speaks ABI 4 (ABI 3 adds each stage's resource, media "
                    + "input, retries and option-dependent outputs, and the host's retrying; ABI 4 adds each stage's "
                    + "stream role, input-file option, landing output and stream refusal, and the host's export_wait): "
                    + "rebuild it against this pipeline's PipelinePluginSDK"
            ),
            (
                abi3.path,
                "was built for plugin ABI 3, but this pipeline speaks ABI 4 (ABI 4 adds each stage's stream role, "
                    + "input-file option, landing output and stream refusal, and the host's export_wait): rebuild it "
                    + "against this pipeline's PipelinePluginSDK"
            ),
            (
                wrongABI.path,
                "was built for plugin ABI 999, but this pipeline speaks ABI 4: rebuild it against this pipeline's "
                    + "PipelinePluginSDK"
            ),
            (
                producer.path,
                "stage c.export says it writes a stream (streamRole producer), which a plugin stage cannot: it may "
                    + "follow one"
            ),
            (
                follower.path,
                "stage type \"c.follow\" is refused: it follows an export (streamRole follower) but names no option "
                    + "for the file it reads: declare inputFileOption, the option a workflow sets to the export's file"
            ),
            (noEntry.path, "does not export pipeline_plugin_abi_version"),
            (scratch.path("notalibrary.so").path, "cannot be loaded as a shared library"),
            (scratch.path("missing.so").path, "no such file"),
        ]
        for (path, message) in cases {
            for command in [
                ["validate", "wf.json", "--plugin", path], ["run", "wf.json", "--plugin", path, "--input", "wf.json"],
            ] {
                let result = try await Binary.run(command, in: scratch.root)
                #expect(result.status == 2, "\(command): \(result.stderr)")
                #expect(result.stderr.contains("plugin \(path): \(message)"), "\(result.stderr)")
            }
        }
    }
}

/// A stage context's checkpoints, for a run that makes none.
private struct NoCheckpoints: StageCheckpointing {
    func saveCheckpoint(_ value: JSONValue) async throws {}
    func idempotencyKey(_ name: String) async throws -> String { name }
}
