import Foundation
import MediaStages
import StageKit
import Testing

@Suite struct MediaToolkitTests {
    @Test func theShimHasTheABIThisCodeWasWrittenFor() {
        #expect(MediaToolkit.abiVersion == 2)
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
