import Foundation
import MediaStages
import NIOConcurrencyHelpers
import StageKit
import TestSupport
import Testing

@Suite struct ExportStageTests {
    let folder = temporaryFolder()

    private func harness() -> StageHarness {
        StageHarness(stateFolder: folder.appendingPathComponent("state"))
    }

    @Test(arguments: Sample.all)
    func transcodeWritesAnH264AACFaststartMP4(sample: Sample) async throws {
        let output = folder.appendingPathComponent("out/\(sample.name).mp4")
        let run = await harness().run(
            TranscodeStage.self,
            options: [
                "file": .string(sample.path), "output": .string(output.path), "profile": "web-720p",
                "video": ["preset": "ultrafast", "maxWidth": 320],
            ])
        let outputs = try run.outputs.get()
        let reference = try await FFprobe.of(output.path)
        #expect(reference.stream("video")?["codec_name"] == "h264")
        #expect(reference.stream("audio")?["codec_name"] == (sample.audioCodec == nil ? nil : "aac"))
        #expect(reference.streams.count == (sample.audioCodec == nil ? 1 : 2))
        // The box is 320 wide as displayed; portrait clips keep their rotation and shrink to fit.
        let (width, height) = reference.displaySize
        #expect(width == outputs["width"]?.intValue && height == outputs["height"]?.intValue)
        #expect(width <= 320 && (sample.displayWidth > sample.displayHeight) == (width > height))
        #expect(abs(reference.duration - (outputs["duration"]?.doubleValue ?? 0)) <= 1.0 / 30 + 0.001)
        #expect(reference.videoFrames == outputs["frames"]?.intValue)
        #expect(try moovBeforeMdat(output.path))
        #expect(outputs["mode"] == "transcode")
        #expect(
            outputs["size"]?.intValue == (try FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int))
        #expect(
            !FileManager.default.fileExists(
                atPath: folder.appendingPathComponent("out/.\(sample.name).mp4.partial.mp4").path))
        #expect(run.progress.last.map { $0.unit == .seconds } == true)
    }

    @Test(arguments: Sample.all)
    func aSegmentedTranscodeIsTheSameVideoAsOneInOnePass(sample: Sample) async throws {
        var outputs: [String: JSONValue] = [:]
        var probes: [String: FFprobe] = [:]
        for (name, segments) in [("whole", 0.0), ("segmented", 0.5)] {
            let output = folder.appendingPathComponent("\(name)/\(sample.name).mp4")
            let run = await harness().run(
                TranscodeStage.self,
                options: [
                    "file": .string(sample.path), "output": .string(output.path), "segmentSeconds": .double(segments),
                    "threads": 2, "video": ["preset": "ultrafast", "maxWidth": 320],
                ])
            outputs[name] = try run.outputs.get()
            probes[name] = try await FFprobe.of(output.path)
        }
        let (whole, segmented) = (try #require(probes["whole"]), try #require(probes["segmented"]))
        #expect(segmented.streams.count == whole.streams.count)
        #expect(segmented.videoFrames == whole.videoFrames)
        #expect(segmented.displaySize == whole.displaySize, "rotation kept")
        #expect(abs(segmented.duration - whole.duration) <= 1.0 / 30 + 0.001)
        #expect(outputs["segmented"]?["hasAudio"] == outputs["whole"]?["hasAudio"])
        #expect(outputs["segmented"]?["frames"] == outputs["whole"]?["frames"])
        #expect(try moovBeforeMdat(folder.appendingPathComponent("segmented/\(sample.name).mp4").path))
    }

    @Test func autoModeRemuxesWhatAlreadyFitsAndTranscodesTheRest() async throws {
        let fits = await harness().run(
            TranscodeStage.self,
            options: [
                "file": .string(Sample.all[0].path), "output": .string(folder.appendingPathComponent("a.mp4").path),
                "mode": "auto", "profile": "web-720p",
            ])
        #expect(try fits.outputs.get()["mode"] == "remux")
        let source = try await FFprobe.of(Sample.all[0].path)
        #expect(try await FFprobe.of(folder.appendingPathComponent("a.mp4").path).videoFrames == source.videoFrames)

        let tooLarge = await harness().run(
            TranscodeStage.self,
            options: [
                "file": .string(Sample.all[0].path), "output": .string(folder.appendingPathComponent("b.mp4").path),
                "mode": "auto",
                "video": ["maxWidth": 320, "preset": "ultrafast"],
            ])
        #expect(try tooLarge.outputs.get()["mode"] == "transcode")
        #expect(try tooLarge.outputs.get()["width"] == 320)
    }

    @Test func remuxCopiesStreamsAndRefusesCodecsMP4CannotHold() async throws {
        let output = folder.appendingPathComponent("remuxed.mp4")
        let run = await harness().run(
            RemuxStage.self, options: ["file": .string(Sample.all[0].path), "output": .string(output.path)])
        #expect(try run.outputs.get()["mode"] == "remux")
        let copied = try await FFprobe.of(output.path).videoFrames
        #expect(try await copied == FFprobe.of(Sample.all[0].path).videoFrames)
        #expect(try moovBeforeMdat(output.path))

        let pcm = await harness().run(
            RemuxStage.self,
            options: [
                "file": .string(Sample.all[1].path), "output": .string(folder.appendingPathComponent("pcm.mp4").path),
            ])
        guard case .failure(let error) = pcm.outputs else {
            Issue.record("PCM audio was remuxed into MP4")
            return
        }
        #expect("\(error)".contains("pcm_s16le"))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("pcm.mp4").path))
    }

    @Test(arguments: Sample.all)
    func thumbnailIsAnUprightJPEG(sample: Sample) async throws {
        let output = folder.appendingPathComponent("\(sample.name).jpg")
        let run = await harness().run(
            ThumbnailStage.self,
            options: ["file": .string(sample.path), "output": .string(output.path), "maxWidth": 200])
        let outputs = try run.outputs.get()
        let reference = try await FFprobe.of(output.path)
        #expect(reference.stream("video")?["codec_name"] == "mjpeg")
        #expect(reference.stream("video")?["width"]?.intValue == outputs["width"]?.intValue)
        #expect(reference.stream("video")?["height"]?.intValue == outputs["height"]?.intValue)
        #expect((outputs["width"]?.intValue ?? 0) <= 200)
        #expect(
            ((outputs["width"]?.intValue ?? 0) > (outputs["height"]?.intValue ?? 0))
                == (sample.displayWidth > sample.displayHeight))
    }

    /// A source cut short (its index says 3 s, 2 s of it are there) fails as damaged by default, before its output
    /// is in place; with `inputs.damaged: "export"` what decodes is converted, with a warning.
    @Test func aTruncatedInputFailsAsDamagedUnlessTheWorkflowExportsWhatDecodes() async throws {
        let output = folder.appendingPathComponent("partial.mp4")
        let options: JSONValue = [
            "file": .string(samples.appendingPathComponent("truncated-faststart.mp4").path),
            "output": .string(output.path),
            "video": ["preset": "ultrafast"],
        ]
        let refused = await harness().run(TranscodeStage.self, options: options)
        guard case .failure(let failure as StageFailure) = refused.outputs else {
            Issue.record("a truncated input was exported: \(refused.outputs)")
            return
        }
        #expect(failure.kind == .damagedInput)
        #expect(failure.message.contains("of the 3.00 s its container declares"), "\(failure.message)")
        #expect(!FileManager.default.fileExists(atPath: output.path))

        var services = ServiceValues()
        services[DamagedInputPolicyKey.self] = .export
        let run = await harness().run(TranscodeStage.self, options: options, services: services)
        let outputs = try run.outputs.get()
        #expect((outputs["duration"]?.doubleValue ?? 0) > 1 && (outputs["duration"]?.doubleValue ?? 9) < 2.5)
        #expect(try await FFprobe.of(output.path).videoFrames == outputs["frames"]?.intValue)
    }

    /// The tolerance: short by more than a second, or by more than 2 % when that is less, and by more than half a
    /// second whatever the length.
    @Test func aShortfallCountsBeyondASecondOrTwoPercent() {
        #expect(DamagedInputPolicy.shortfall(decoded: 2, declared: 3) != nil)
        #expect(DamagedInputPolicy.shortfall(decoded: 2.6, declared: 3) == nil)
        #expect(DamagedInputPolicy.shortfall(decoded: 7198.9, declared: 7200) != nil)
        #expect(DamagedInputPolicy.shortfall(decoded: 7199.2, declared: 7200) == nil)
        #expect(DamagedInputPolicy.shortfall(decoded: 39.1, declared: 40) != nil)
        #expect(DamagedInputPolicy.shortfall(decoded: 39.3, declared: 40) == nil)
        #expect(DamagedInputPolicy.shortfall(decoded: 0, declared: 0) == nil)
    }

    @Test(
        arguments: [
            ("not-media.mp4", nil, "moov atom not found"),
            ("missing.mp4", nil, "No such file or directory"),
            ("clip-h264-aac.mp4", "/proc/pipeline-test/out.mp4", "cannot create output folder /proc/pipeline-test"),
            ("clip-h264-aac.mp4", "/dev/full", "is a file"),
        ] as [(String, String?, String)])
    func badInputsAndOutputsAreClearErrors(name: String, output: String?, expected: String) async {
        var options: [String: JSONValue] = ["file": .string(samples.appendingPathComponent(name).path)]
        options["output"] = .string(output ?? folder.appendingPathComponent("x.mp4").path)
        if output == "/dev/full" { options["output"] = "/dev/full/x.mp4" }
        let run = await harness().run(TranscodeStage.self, options: .object(options))
        guard case .failure(let error) = run.outputs else {
            Issue.record("\(name) → \(output ?? "-") succeeded")
            return
        }
        #expect("\(error)".contains(expected), "\(error)")
        #expect((error as? any ClassifiedError)?.disposition.isRetryable == false)
    }

    @Test func aMissingOutputFolderIsAnErrorWhenNotToCreateIt() async {
        let run = await harness().run(
            TranscodeStage.self,
            options: [
                "file": .string(Sample.all[0].path),
                "output": .string(folder.appendingPathComponent("no/such/x.mp4").path), "createFolder": false,
            ])
        guard case .failure(let error) = run.outputs else {
            Issue.record("wrote into a missing folder")
            return
        }
        #expect("\(error)".contains("does not exist"))
    }

    @Test func cancellingATranscodeStopsPromptlyAndLeavesNoFile() async throws {
        let clip = folder.appendingPathComponent("long.mp4")
        try await makeClip(seconds: 40, size: "1280x720", at: clip)
        let output = folder.appendingPathComponent("out/long-out.mp4")
        let partial = folder.appendingPathComponent("out/.long-out.mp4.partial.mp4")
        let harness = harness()
        let ended = Flag()
        let task = Task {
            let run = await harness.run(
                TranscodeStage.self,
                options: ["file": .string(clip.path), "output": .string(output.path), "video": ["preset": "veryfast"]])
            ended.set()
            return run
        }
        // Cancel once the partial file holds a seeded 32 to 512 KiB: the transcode is under way.
        let random = SeededRandom("cancellingATranscodeStopsPromptlyAndLeavesNoFile")
        let cancelAt = random.int(in: (32 << 10)...(512 << 10))
        try await waitUntil("the partial file holds \(cancelAt) bytes") {
            let size = (try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0
            return size >= cancelAt || ended.isSet
        }
        task.cancel()
        // It stops: no bound on how soon (a loaded machine may take its time), only the safety limit.
        try await waitUntil("the cancelled transcode ends") { ended.isSet }
        let run = await task.value
        #expect(throws: CancellationError.self) { try run.outputs.get() }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("out").path)
        #expect(left.isEmpty, "left behind: \(left)")
    }

    @Test func cancellingASegmentedTranscodeStopsPromptlyAndLeavesNoOutput() async throws {
        let clip = folder.appendingPathComponent("long.mp4")
        try await makeClip(seconds: 20, size: "1280x720", at: clip)
        let output = folder.appendingPathComponent("out/segmented.mp4")
        let harness = harness()
        let segments = folder.appendingPathComponent("state/scratch/ffmpeg.transcode/segments")
        let ended = Flag()
        let task = Task {
            let run = await harness.run(
                TranscodeStage.self,
                options: [
                    "file": .string(clip.path), "output": .string(output.path), "segmentSeconds": 5,
                    "video": ["preset": "veryfast"],
                ])
            ended.set()
            return run
        }
        // Cancel while a seeded segment (of the first three) is being encoded.
        let random = SeededRandom("cancellingASegmentedTranscodeStopsPromptlyAndLeavesNoOutput")
        let segment = random.int(in: 0...2)
        let partial = segments.appendingPathComponent(String(format: ".part-%05d.mp4.partial.mp4", segment))
        try await waitUntil("segment \(segment + 1) is being encoded") {
            FileManager.default.fileExists(atPath: partial.path) || ended.isSet
        }
        task.cancel()
        try await waitUntil("the cancelled transcode ends") { ended.isSet }
        let run = await task.value
        #expect(throws: CancellationError.self) { try run.outputs.get() }
        let left =
            (try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("out").path)) ?? []
        #expect(left.isEmpty, "left behind: \(left)")
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: segments.path)) ?? []
        #expect(kept.allSatisfy { !$0.hasPrefix(".") }, "a partial segment was left: \(kept)")
        #expect(kept.filter { $0.hasPrefix("part-") && $0.hasSuffix(".mp4") }.count == segment, "\(kept)")
    }

    /// A run that encoded every segment and then failed to join them: the rerun reuses them all and only joins.
    @Test(.timeLimit(.minutes(2))) func aRerunWithEverySegmentDoneOnlyJoinsThem() async throws {
        let clip = folder.appendingPathComponent("joined.mp4")
        try await makeClip(seconds: 6, size: "640x360", at: clip)
        let output = folder.appendingPathComponent("out/joined-out.mp4")
        let options: JSONValue = [
            "file": .string(clip.path), "output": .string(output.path), "segmentSeconds": 2,
            "video": ["preset": "ultrafast"],
        ]
        // A folder where the join writes its partial file makes the join fail after the last segment.
        let partial = folder.appendingPathComponent("out/.joined-out.mp4.partial.mp4")
        try FileManager.default.createDirectory(at: partial, withIntermediateDirectories: true)
        let failed = await harness().run(TranscodeStage.self, options: options)
        #expect(throws: (any Error).self) { try failed.outputs.get() }
        let saved = failed.checkpoint?["segments"]?.arrayValue ?? []
        #expect(saved.count == 3, "\(String(describing: failed.checkpoint))")

        try FileManager.default.removeItem(at: partial)
        let rerun = await harness().run(TranscodeStage.self, options: options, checkpoint: failed.checkpoint)
        let outputs = try rerun.outputs.get()
        #expect(outputs["frames"]?.intValue == 180)
    }

    @Test func aFinishedOutputIsReusedWhenSizeAndHashMatchTheCheckpoint() async throws {
        let output = folder.appendingPathComponent("reuse.mp4")
        let options: JSONValue = [
            "file": .string(Sample.all[0].path), "output": .string(output.path), "video": ["preset": "ultrafast"],
        ]
        let first = await harness().run(TranscodeStage.self, options: options)
        let outputs = try first.outputs.get()
        let modified = try FileManager.default.attributesOfItem(atPath: output.path)[.modificationDate] as? Date
        // A crash after the rename, before the stage's checkpoint: the rerun gets the commit record back.
        let second = await harness().run(TranscodeStage.self, options: options, checkpoint: first.checkpoint)
        #expect(try second.outputs.get() == outputs)
        #expect(try FileManager.default.attributesOfItem(atPath: output.path)[.modificationDate] as? Date == modified)
        // A file changed since: the stage runs again.
        try Data("garbage".utf8).write(to: output)
        let third = await harness().run(TranscodeStage.self, options: options, checkpoint: first.checkpoint)
        #expect(try third.outputs.get() == outputs)
        #expect(try Data(contentsOf: output).count == outputs["size"]?.intValue)
    }
}

/// Set by one task, read by another.
private final class Flag: Sendable {
    private let value = NIOLockedValueBox(false)

    var isSet: Bool { value.withLockedValue { $0 } }

    func set() {
        value.withLockedValue { $0 = true }
    }
}
