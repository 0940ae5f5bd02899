import Testing

@testable import MediaStages

/// Where a segmented transcode cuts: near every multiple of the segment length, at a keyframe if one is close.
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
        #expect(zip(starts, [0, 25.0 / 3, 50.0 / 3, 100.0 / 3, 125.0 / 3, 50]).allSatisfy { abs($0 - $1) < 1e-9 })
        // Only a keyframe at the start: the multiples.
        #expect(SegmentedTranscode.starts(duration: 40, length: 10, keyframes: [0]) == [0, 10, 20, 30])
    }
}
