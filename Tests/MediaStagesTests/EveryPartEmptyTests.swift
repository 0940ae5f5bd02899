import CMediaShim
import Foundation
import Logging
import StageKit
import Testing

@testable import MediaStages

/// A segmented export whose every range has nothing decodable has no part to join: the shim's join says so with a
/// code of its own, and the export says of the source what a whole export says of it.
struct EveryPartEmptyTests {
    @Test func aJoinOfEmptyPartsFailsWithACodeOfItsOwn() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let parts = try await Self.emptyParts(in: folder)

        let error = await #expect(throws: MediaError.self) {
            try await MediaToolkit.join(
                parts: parts.paths, starts: parts.starts, audio: nil,
                to: folder.appendingPathComponent("joined.mp4").path, faststart: true)
        }
        #expect(error?.shimCode == MS_ERROR_EVERY_PART_EMPTY.rawValue)
        #expect(error?.code == .noFrames)
        #expect(error?.message == "every part is empty: no video frame could be decoded")
    }

    @Test func theExportSaysNoFrameOfItsSourceCouldBeDecoded() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let parts = try await Self.emptyParts(in: folder)
        let join = Join(
            input: "/in/lost.mp4", parts: parts.paths, starts: parts.starts,
            output: folder.appendingPathComponent("joined.mp4").path, faststart: true, indexSpace: 0)
        let context = StageContext(
            stageID: "export", stageType: "ffmpeg.transcode",
            item: InputItem(path: "/in/lost.mp4", relativePath: "lost.mp4", size: 0, modified: 0), attempt: 1,
            logger: Logger(label: "test.join"), scratchFolder: folder, services: ServiceValues(), savedCheckpoint: nil,
            checkpointer: NoCheckpoints(), progress: { _ in })

        let error = await #expect(throws: MediaError.self) {
            try await join.run(audio: nil, gate: nil, context: context)
        }
        #expect(error?.message == "'/in/lost.mp4': no video frame could be decoded")
        #expect(error?.code == .noFrames)
        #expect(error?.shimCode == MS_ERROR_NO_FRAMES.rawValue)
    }

    /// Two parts of a tiny clip's ranges past its end: MP4s without a track, as a range with nothing decodable gives.
    static func emptyParts(in folder: URL) async throws -> (paths: [String], starts: [Double]) {
        let clip = folder.appendingPathComponent("clip.mp4")
        try await makeClip(seconds: 0.2, size: "64x48", rate: "25", at: clip)
        var settings = TranscodeSettings()
        settings.preset = .ultrafast
        settings.threads = 1
        settings.streams = .video
        let starts = [10.0, 11.0]
        var paths: [String] = []
        for (index, start) in starts.enumerated() {
            settings.range = .init(start: start, end: start + 1)
            let part = folder.appendingPathComponent("part-\(index).mp4").path
            _ = try await MediaToolkit.transcode(clip.path, to: part, settings: settings)
            paths.append(part)
        }
        return (paths, starts)
    }
}

/// A stage context's checkpoints, for a call that makes none.
private struct NoCheckpoints: StageCheckpointing {
    func saveCheckpoint(_ value: JSONValue) async throws {}
    func idempotencyKey(_ name: String) async throws -> String { name }
}
