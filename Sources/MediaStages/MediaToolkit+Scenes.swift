import CMediaShim
import Foundation
public import Logging

/// Where a video's scene changes: the first frame of a new shot, with how strongly it differs from the one before.
public struct SceneChange: Sendable {
    /// The frame's presentation time, in seconds from the source's start (as a transcode's range counts it).
    public var time: Double
    /// libavfilter's `scdet` score of the frame against the one before, 0–100: the change of the pictures' mean
    /// absolute difference, so that a cut scores high and motion or a fade low.
    public var score: Double

    /// A change at `time` seconds scoring `score`.
    public init(time: Double, score: Double) {
        self.time = time
        self.score = score
    }
}

extension MediaToolkit {
    /// The lowest `scdet` score counted as a scene change: the filter's own default.
    public static let sceneThreshold = 10.0
    /// The height the pictures are scored at: a cut changes the whole picture, which 180 gray lines show as well
    /// as the full picture does, for a fraction of the scaling and scoring (docs/benchmarks.md).
    public static let sceneHeight = 180

    /// The scene changes of the video of `path` that score `threshold` or more, in order. One decoding pass over
    /// the video (without the loop filter) scored by libavfilter's `scdet` at `height` lines in gray (0: the
    /// source's size). `progress` gets (seconds scored, the duration); cancelling the calling task stops the pass
    /// within a fraction of a second.
    public static func sceneChanges(
        _ path: String, threshold: Double = sceneThreshold, height: Int = sceneHeight, logger: Logger? = nil,
        progress: @escaping @Sendable (Double, Double) -> Void = { _, _ in }
    ) async throws -> [SceneChange] {
        try await runShim(about: path, logger: logger, progress: progress) { callback, context, message in
            var found = ms_scene_changes()
            defer { ms_scene_changes_free(&found) }
            let status = ms_scene_detect(
                path, threshold, Int32(clamping: height), callback, context, &found, &message, message.count)
            guard status == 0 else { return (status, []) }
            let count = Int(found.count)
            let changes = (0..<count).map { SceneChange(time: found.times[$0], score: found.scores[$0]) }
            return (status, changes)
        }
    }
}
