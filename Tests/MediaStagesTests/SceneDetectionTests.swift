import Foundation
import TestSupport
import Testing

@testable import MediaStages

/// ``MediaToolkit/sceneChanges(_:threshold:height:logger:progress:)`` on a clip made of visually different sources
/// whose cuts are known.
@Suite struct SceneDetectionTests {
    /// testsrc2 until 2.4 s, mandelbrot until 4.4 s, smptebars until 6.4 s, testsrc2 again until 8 s (25 fps): cuts at
    /// frames 60, 110 and 160, none at the source's keyframes (every 50 frames, x264's scene cuts off; three B-frames,
    /// so decoding order is not display order).
    static let cuts = [2.4, 4.4, 6.4]

    static func makeClip(at path: String, startTime: Double = 0) async {
        let size = "size=320x180:rate=25"
        let made = await runTool(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=\(size):duration=2.4", "-f", "lavfi", "-i",
                "mandelbrot=\(size)", "-f", "lavfi", "-i", "smptebars=\(size):duration=2", "-f", "lavfi", "-i",
                "testsrc2=\(size):duration=1.6", "-filter_complex",
                "[1]trim=duration=2,setpts=PTS-STARTPTS[m];[0][m][2][3]concat=n=4:v=1:a=0[v]", "-map", "[v]",
                "-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "50", "-x264-params", "scenecut=0",
                "-output_ts_offset", "\(startTime)", path,
            ])
        #expect(made.status == 0, "\(made.stderr)")
    }

    @Test(arguments: [0.0, 1.5])
    func theCutsAreFoundAtTheirFrames(startTime: Double) async throws {
        let scratch = try Scratch()
        let clip = scratch.path("cuts.mp4").path
        await Self.makeClip(at: clip, startTime: startTime)
        let changes = try await MediaToolkit.sceneChanges(clip)
        #expect(changes.count == Self.cuts.count, "\(changes)")
        for (change, cut) in zip(changes, Self.cuts) {
            #expect(abs(change.time - cut) < 1e-6, "\(change) for the cut at \(cut) s")
            #expect(change.score >= MediaToolkit.sceneThreshold)
        }
        // The full-size pictures find the same cuts.
        let full = try await MediaToolkit.sceneChanges(clip, height: 0)
        #expect(full.map(\.time) == changes.map(\.time), "\(full)")
    }

    @Test func aFileWithoutVideoIsRefused() async throws {
        let scratch = try Scratch()
        let tone = scratch.path("tone.m4a").path
        let made = await runTool(
            "/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac", tone])
        #expect(made.status == 0)
        await #expect(throws: MediaError.self) { try await MediaToolkit.sceneChanges(tone) }
    }

    /// The plan of a segmented encode of the clip in 2 s segments starts them at the cuts (each within a quarter of a
    /// segment of a multiple of 2 s), and at the keyframes with `segmentCuts: keyframes`.
    @Test func aSegmentedPlanStartsAtTheCuts() async throws {
        let scratch = try Scratch()
        let clip = scratch.path("cuts.mp4").path
        await Self.makeClip(at: clip)
        let scenes = try await SegmentedTranscode.starts(clip, duration: 8, length: 2, cuts: .scenes, logger: nil)
        #expect(
            scenes.count == 4 && zip(scenes, [0] + Self.cuts).allSatisfy { abs($0 - $1) < 1e-6 }, "\(scenes)")
        let keyframes = try await SegmentedTranscode.starts(clip, duration: 8, length: 2, cuts: .keyframes, logger: nil)
        #expect(keyframes == [0, 2, 4, 6], "\(keyframes)")
    }
}
