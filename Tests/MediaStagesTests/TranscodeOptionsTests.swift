import Foundation
import MediaStages
import StageKit
import TestSupport
import Testing

/// `ffmpeg.transcode`'s options that its declarations cannot state alone: the CRF's range depends on the codec,
/// which the profile may choose. One rule, run on a workflow's literal values (`pipeline validate`) and again on
/// the resolved ones before the stage opens its input.
@Suite struct TranscodeOptionsTests {
    private func problems(_ with: JSONValue) -> [String] {
        TranscodeStage.Options.problems(in: with).map { "\($0.path): \($0.message)" }
    }

    @Test func theCRFsRangeIsTheCodecs() {
        #expect(
            problems(["video": ["crf": 60]]) == ["video.crf: expected an integer from 0 to 51 for h264, found 60"])
        #expect(problems(["video": ["crf": 60, "codec": "av1"]]).isEmpty)
        #expect(problems(["profile": "web-av1", "video": ["crf": 60]]).isEmpty)
        #expect(
            problems(["profile": "archive-hevc", "video": ["crf": 60]]) == [
                "video.crf: expected an integer from 0 to 51 for hevc, found 60"
            ])
        // The video's codec is the one written, whatever the profile's.
        #expect(problems(["profile": "web-av1", "video": ["crf": 60, "codec": "h264"]]).count == 1)
        // Unknown until a template is resolved: checked then.
        #expect(problems(["video": ["crf": "${vars.crf}"]]).isEmpty)
        #expect(problems(["profile": "${vars.profile}", "video": ["crf": 60]]).isEmpty)
    }

    /// A resolved CRF out of the codec's range, or a frame rate of 0, fails the stage before it opens the input.
    @Test func aRunRefusesThemBeforeOpeningTheInput() async {
        let harness = StageHarness(stateFolder: temporaryFolder())
        let refused: [(JSONValue, String)] = [
            (["crf": 60], "invalid option with.video.crf: expected an integer from 0 to 51 for h264, found 60"),
            (["fps": 0], "invalid option with.video.fps: expected a number of more than 0, found 0"),
        ]
        for (video, message) in refused {
            let run = await harness.run(TranscodeStage.self, options: ["file": "/nonexistent.mov", "video": video])
            guard case .failure(let failure as StageFailure) = run.outputs else {
                Issue.record("\(video) ran")
                continue
            }
            #expect(failure.message == message)
            #expect(failure.kind == .invalidOptions)
        }
    }
}
