import Foundation
import Testing

@testable import MediaStages

/// Where a segmented transcode cuts: near every multiple of the segment length, at the strongest scene change within
/// a quarter of a segment, else at a keyframe if one is close.
@Suite struct SegmentPlanTests {
    @Test func withoutKeyframesTheSegmentsStartAtTheMultiples() {
        #expect(SegmentedTranscode.starts(duration: 60, length: 10, keyframes: []) == [0, 10, 20, 30, 40, 50])
        // A last piece under a second joins the one before.
        #expect(SegmentedTranscode.starts(duration: 30.5, length: 10, keyframes: []) == [0, 10, 20])
        #expect(SegmentedTranscode.starts(duration: 31.5, length: 10, keyframes: []) == [0, 10, 20, 30])
    }

    @Test func aNearbyKeyframeIsTheStart() {
        let keyframes = stride(from: 0.0, to: 60, by: 1.5).map { $0 }
        #expect(
            SegmentedTranscode.starts(duration: 60, length: 10, keyframes: keyframes) == [
                0, 10.5, 19.5, 30, 40.5, 49.5,
            ])
    }

    @Test func aLongGroupOfPicturesGivesTheNearestKeyframeOrTheMultiple() {
        // One keyframe every 8.33 s: 10 → 8.33, 20 → 16.67, 30 → 33.33, 40 → 41.67, 50 → 50.
        let keyframes = (0..<8).map { Double($0) * 25 / 3 }
        let starts = SegmentedTranscode.starts(duration: 60, length: 10, keyframes: keyframes)
        #expect(starts.count == 6)
        let expected: [Double] = [0, 25.0 / 3, 50.0 / 3, 100.0 / 3, 125.0 / 3, 50]
        #expect(zip(starts, expected).allSatisfy { abs($0 - $1) < 1e-9 })
        // Only a keyframe at the start: the multiples.
        #expect(SegmentedTranscode.starts(duration: 40, length: 10, keyframes: [0]) == [0, 10, 20, 30])
    }

    @Test func theStrongestSceneChangeNearAMultipleIsTheStart() {
        let keyframes = stride(from: 0.0, to: 60, by: 2).map { $0 }
        let scenes = [
            SceneChange(time: 8.6, score: 30),  // 10: the stronger of two within 2.5 s
            SceneChange(time: 11.2, score: 14),
            SceneChange(time: 17.0, score: 12),  // 20: 3 s away, outside the window: the keyframe at 20
            SceneChange(time: 28.0, score: 20),  // 30: two as strong: the nearer one
            SceneChange(time: 31.04, score: 20),
            SceneChange(time: 52.2, score: 50),  // 50
        ]
        #expect(
            SegmentedTranscode.starts(duration: 60, length: 10, keyframes: keyframes, scenes: scenes) == [
                0, 8.6, 20, 31.04, 40, 52.2,
            ])
    }

    @Test func aStartTooCloseToTheOneBeforeGivesWayToTheNearestUsableOne() {
        // 10 → the cut at 12.5; 20 → the keyframe at 15.5 is nearest but within half a segment of 12.5, and the one
        // at 25.5 more than half a segment from 20: the multiple; 30 → the cut at 32.5.
        let scenes = [SceneChange(time: 12.5, score: 40), SceneChange(time: 32.5, score: 40)]
        #expect(
            SegmentedTranscode.starts(duration: 40, length: 10, keyframes: [0, 15.5, 25.5], scenes: scenes) == [
                0, 12.5, 20, 32.5,
            ])
        // 20 → 15.5 is too close to 12.5, 24.8 is usable though farther: 24.8.
        #expect(
            SegmentedTranscode.starts(duration: 40, length: 10, keyframes: [0, 15.5, 24.8], scenes: scenes) == [
                0, 12.5, 24.8, 32.5,
            ])
    }

    @Test func aSceneChangeInTheLastSecondIsPassedOver() {
        // 10 → 7.6; 20 → the cut at 20.8 lies in the last second (a piece under a second): the multiple.
        let scenes = [SceneChange(time: 7.6, score: 40), SceneChange(time: 20.8, score: 90)]
        #expect(SegmentedTranscode.starts(duration: 21.5, length: 10, keyframes: [], scenes: scenes) == [0, 7.6, 20])
    }

    @Test func aPlanSavedBeforeTheRuleWasRecordedWasCutAtKeyframes() throws {
        let saved = #"{"starts": [0, 10], "threads": 2, "encoder": "x264-164", "segments": []}"#
        let progress = try JSONDecoder().decode(SegmentedTranscode.Progress.self, from: Data(saved.utf8))
        #expect(progress.cuts == nil && progress.length == nil)
        let now = SegmentedTranscode.Progress(
            starts: [0, 10], cuts: .keyframes, length: 10, threads: 2, encoder: "x264-164", segments: [])
        #expect(progress.matches(now), "the same starts, threads and encoder: its segments are reused")
        #expect(now.range(of: 0, duration: 25) == 0..<10 && now.range(of: 1, duration: 25) == 10..<25)
    }

    @Test func thePlanNoteCountsSavedSegmentsOnlyUnderTheRuleAskedFor() {
        let done = [SegmentedTranscode.Segment(index: 0, size: 1, sha256: "a")]
        let legacy = SegmentedTranscode.Progress(
            starts: [0, 10], cuts: nil, length: nil, threads: 2, encoder: "x264-164", segments: done)
        var byScenes = legacy
        (byScenes.cuts, byScenes.length) = (.scenes, 10)
        var plan = legacy
        (plan.cuts, plan.length, plan.segments) = (.keyframes, 10, [])
        let note = { (plan: SegmentedTranscode.Progress, cuts: SegmentCuts, saved: SegmentedTranscode.Progress) in
            TranscodeStage.segmentsNote(plan, cuts: cuts, length: 10, saved: saved)
        }
        #expect(note(plan, .keyframes, legacy) == "in 2 segments of 10.0s, 1 already encoded")
        // Scenes asked for, a plan cut at keyframes saved: the run finds the scene changes, its starts may move.
        let unfound = "in about 2 segments of 10.0s cut at scene changes, found by a pass over the source first"
        #expect(note(plan, .scenes, legacy) == unfound)
        // Keyframes asked for, a plan cut at scene changes saved: not counted either.
        #expect(note(plan, .keyframes, byScenes) == "in 2 segments of 10.0s")
        plan.cuts = .scenes  // the saved starts taken, as the run takes them
        #expect(SegmentCuts.scenes.takesStarts(cutBy: byScenes.cuts, for: byScenes.length, length: 10))
        #expect(!SegmentCuts.scenes.takesStarts(cutBy: byScenes.cuts, for: byScenes.length, length: 5))
        #expect(!SegmentCuts.keyframes.takesStarts(cutBy: byScenes.cuts, for: byScenes.length, length: 10))
        #expect(note(plan, .scenes, byScenes) == "in 2 segments of 10.0s, 1 already encoded")
    }
}
