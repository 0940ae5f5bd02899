import Foundation
import StageKit
import TestSupport
import Testing

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
        for name in ["a", "b"] {
            let lines = scratch.read("out/\(name).txt").split(separator: "\n")
            #expect(lines.count == 12 && Set(lines).count == 12, "\(name): \(lines)")
        }
        #expect(scratch.read("after.log").split(separator: "\n") == ["12", "12"])
        let stages = try await Binary.run(["stages", "--plugin", Self.plugin.path], in: scratch.root)
        #expect(stages.stdout.contains("hello.greet  [plugin \(Self.plugin.path)]"))
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
        let noEntry = try await cLibrary("int unrelated(void) { return 1; }\n", in: scratch, name: "noentry")
        try scratch.write("notalibrary.so", "this is text, not a shared library\n")
        let cases: [(String, String)] = [
            (
                oldABI.path,
                "was built for plugin ABI 2, but this pipeline speaks ABI 3 (ABI 3 carries each stage's resource, "
                    + "retries and option-dependent outputs): rebuild it against this pipeline's PipelinePluginSDK"
            ),
            (
                wrongABI.path,
                "was built for plugin ABI 999, but this pipeline speaks ABI 3: rebuild it against this pipeline's "
                    + "PipelinePluginSDK"
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
