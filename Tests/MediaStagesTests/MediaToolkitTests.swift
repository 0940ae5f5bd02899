import Foundation
import MediaStages
import StageKit
import Synchronization
import Testing

@Suite struct MediaToolkitTests {
    @Test func theShimHasTheABIThisCodeWasWrittenFor() {
        #expect(MediaToolkit.abiVersion == 15)
    }

    @Test(arguments: Sample.all)
    func probeAgreesWithFFprobe(sample: Sample) async throws {
        let info = try await MediaToolkit.probe(sample.path)
        let reference = try await FFprobe.of(sample.path)
        let video = try #require(info.video)
        #expect(video.codec == sample.videoCodec)
        #expect(video.codec == reference.stream("video")?["codec_name"]?.stringValue)
        #expect(video.width == reference.stream("video")?["width"]?.intValue)
        #expect(video.height == reference.stream("video")?["height"]?.intValue)
        #expect(video.displayWidth == sample.displayWidth && video.displayHeight == sample.displayHeight)
        #expect(abs(video.fps - reference.fps) < 0.01)
        #expect(abs(info.duration - reference.duration) < 1.0 / 30)
        #expect(info.audio?.codec == sample.audioCodec)
        #expect(
            info.size == Int64((try FileManager.default.attributesOfItem(atPath: sample.path)[.size] as? Int) ?? -1))
    }

    /// A segmented transcode starts its next segment when the video of the current one is read: the shim says
    /// so once, while the output is still being written, and not at all for audio alone.
    @Test func theEndOfTheVideoIsReportedBeforeTheEncoderDrains() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = Sample.all[0].path
        let output = folder.appendingPathComponent("range.mp4").path
        var settings = TranscodeSettings()
        settings.preset = .ultrafast
        settings.streams = .video
        settings.faststart = false
        settings.range = .init(start: 1, end: 2)
        let sizesWhenRead = Mutex<[Int]>([])
        let report = try await MediaToolkit.transcode(
            input, to: output, settings: settings,
            videoRead: {
                let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
                sizesWhenRead.withLock { $0.append(size) }
            })
        let sizes = sizesWhenRead.withLock { $0 }
        #expect(sizes.count == 1)
        #expect(Int64(try #require(sizes.first)) < report.size, "the output was complete when the video was read")

        settings.streams = .audio
        settings.range = nil
        let calls = Atomic<Int>(0)
        _ = try await MediaToolkit.transcode(
            input, to: folder.appendingPathComponent("audio.mp4").path, settings: settings,
            videoRead: { calls.add(1, ordering: .relaxed) })
        #expect(calls.load(ordering: .relaxed) == 0)
    }

    /// The reading thread skips the packets it cannot decode and counts them: a transcode and a ladder of the same
    /// damaged input report the same count, and still write what decodes.
    @Test func packetsTheReadingThreadCannotDecodeAreCountedAndSkipped() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let damaged = folder.appendingPathComponent("damaged.mp4")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Sample.all[0].path)))
        // 64 bytes of 0xFF every 4 KiB through the middle third: some packets of each stream no longer decode.
        for start in stride(from: bytes.count / 3, to: 2 * bytes.count / 3, by: 4096) {
            for index in start..<min(start + 64, bytes.count) { bytes[index] = 0xFF }
        }
        try Data(bytes).write(to: damaged)
        var settings = TranscodeSettings()
        settings.preset = .ultrafast
        settings.threads = 2
        let report = try await MediaToolkit.transcode(
            damaged.path, to: folder.appendingPathComponent("whole.mp4").path, settings: settings)
        #expect(report.decodeErrors > 0)
        #expect(report.videoFrames > 0 && report.hasAudio)

        var video = settings
        video.streams = .video
        var audio = settings
        audio.streams = .audio
        let reports = try await MediaToolkit.transcodeLadder(
            damaged.path,
            outputs: [
                (folder.appendingPathComponent("video.mp4").path, video),
                (folder.appendingPathComponent("audio.mp4").path, audio),
            ])
        #expect(reports.map(\.decodeErrors) == [report.decodeErrors, report.decodeErrors])
        #expect(reports[0].videoFrames == report.videoFrames)
    }

    @Test(arguments: [
        ("not-media.mp4", "moov atom not found"),
        ("truncated.mp4", "moov atom not found"),
        ("generate.sh", "Invalid data found when processing input"),
        ("missing.mp4", "No such file or directory"),
    ])
    func unreadableInputsAreClearErrors(name: String, expected: String) async {
        do {
            _ = try await MediaToolkit.probe(samples.appendingPathComponent(name).path)
            Issue.record("\(name) probed")
        } catch {
            #expect("\(error)".contains(expected), "\(error)")
        }
    }
}
