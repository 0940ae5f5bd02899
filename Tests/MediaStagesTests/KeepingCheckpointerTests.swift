import Foundation
import Logging
import StageKit
import TestSupport
import Testing

/// `keepingInCheckpoints`: what the CRF search relies on to survive a segmented encode's own checkpoints.
@Suite struct KeepingCheckpointerTests {
    /// Records what it is asked to save.
    private actor Recorder: StageCheckpointing {
        var saved: [JSONValue] = []
        func saveCheckpoint(_ value: JSONValue) async throws { saved.append(value) }
        func idempotencyKey(_ name: String) async throws -> String { "key-\(name)" }
    }

    @Test func itAddsItsMemberToAnObjectCheckpointAndPassesAnythingElseThrough() async throws {
        let recorder = Recorder()
        let context = StageContext(
            stageID: "export", stageType: "ffmpeg.transcode",
            item: InputItem(path: "/in/a.mp4", relativePath: "a.mp4", size: 0, modified: 0), attempt: 1,
            logger: Logger(label: "test.keeping"), scratchFolder: temporaryFolder(), services: ServiceValues(),
            savedCheckpoint: nil, checkpointer: recorder, progress: { _ in })
        let keeping = context.keepingInCheckpoints("crfSearch", ["crf": 23.25])
        try await keeping.checkpoint(["segments": [0, 1]] as JSONValue)
        try await keeping.checkpoint([1, 2] as JSONValue)
        try await context.checkpoint(["segments": [0]] as JSONValue)
        #expect(
            await recorder.saved == [
                ["segments": [0, 1], "crfSearch": ["crf": 23.25]], [1, 2], ["segments": [0]],
            ])
        #expect(try await keeping.idempotencyKey("upload") == "key-upload")
    }
}
