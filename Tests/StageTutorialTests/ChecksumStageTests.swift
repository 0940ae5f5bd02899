import Foundation
import StageKit
import Testing

/// The tutorial's stage, run alone with StageHarness: defaults filled in as in a workflow, outputs as JSON, and a
/// checkpoint handed in as a crashed run would have left it.
@Suite struct ChecksumStageTests {
    /// A folder of its own for each test, removed at the end.
    func withFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("checksum-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder)
    }

    /// A file of 2.5 MiB whose bytes differ from part to part, and the item a workflow would make of it.
    func makeFile(in folder: URL) throws -> InputItem {
        let url = folder.appendingPathComponent("clip.mp4")
        try Data((0..<2_621_440).map { UInt8(truncatingIfNeeded: $0 / 1000) }).write(to: url)
        return InputItem(path: url.path, relativePath: "clip.mp4", size: 2_621_440, modified: 0)
    }

    /// The SHA-256 of each MiB of that file, computed apart from the stage (`sha256sum` of each part).
    let expectedParts: [JSONValue] = [
        "443eb7194376ca9bda5297c0ba6e9d3023675d4c608c4444dbe9bcb8e96a6ef7",
        "f9e127be0400c02343feaa31bde87194e1a4978e99da2740534e2eb40e461698",
        "51acf03bfcf31cdc49909fa8ee85561cc8a0b93f28bfb87d86ab15f7a5b636ec",
    ]

    @Test func hashesEachPartOfTheInputFile() async throws {
        try await withFolder { folder in
            let item = try makeFile(in: folder)
            let run = await StageHarness(stateFolder: folder).run(
                ChecksumStage.self, options: ["partSize": "1MiB"], item: item)
            let outputs = try run.outputs.get()
            #expect(outputs["parts"] == .array(expectedParts))
            #expect(outputs["size"] == 2_621_440)
            #expect(run.progress.map(\.completed) == [1_048_576, 2_097_152, 2_621_440])
            #expect(run.checkpoint?["parts"]?.arrayValue?.count == 3)
        }
    }

    @Test func thePartSizeDefaultsTo8MiBWithinItsBounds() throws {
        let field = try #require(ChecksumStage.optionSchema.field(named: "partSize"))
        #expect(field.defaultValue == 8_388_608)
        #expect(field.minimum == 1_048_576 && field.maximum == 67_108_864)
        #expect(!field.admits(67_108_865))
    }

    @Test func resumesAfterTheLastPartCheckpointed() async throws {
        try await withFolder { folder in
            let item = try makeFile(in: folder)
            let facts = try await ChecksumStage.facts(of: item.path)
            // As a run killed after its first part left it; a digest the stage would never make shows it was kept.
            let checkpoint = try JSONValue(encoding: ChecksumStage.Saved(file: facts, parts: ["kept"]))
            let run = await StageHarness(stateFolder: folder).run(
                ChecksumStage.self, options: ["partSize": "1MiB"], item: item, checkpoint: checkpoint)
            let parts = try run.outputs.get()["parts"]?.arrayValue ?? []
            #expect(parts == ["kept"] + expectedParts.dropFirst())
            #expect(run.progress.first?.completed == 2_097_152)
        }
    }

    @Test func aChangedFileIsHashedFromTheStart() async throws {
        try await withFolder { folder in
            let item = try makeFile(in: folder)
            let stale = ChecksumStage.Saved(file: .init(size: 1, modified: 0), parts: ["stale"])
            let run = await StageHarness(stateFolder: folder).run(
                ChecksumStage.self, options: ["partSize": "1MiB"], item: item,
                checkpoint: try JSONValue(encoding: stale))
            #expect(try run.outputs.get()["parts"] == .array(expectedParts))
        }
    }

    @Test func aMissingFileIsInvalidInputAndNotRetried() async throws {
        try await withFolder { folder in
            let missing = folder.appendingPathComponent("missing.mp4").path
            let run = await StageHarness(stateFolder: folder).run(
                ChecksumStage.self, options: ["file": .string(missing)])
            guard case .failure(let failure as StageFailure) = run.outputs else {
                Issue.record("expected a StageFailure, got \(run.outputs)")
                return
            }
            #expect(failure.kind == .invalidInput)
            #expect(failure.disposition == .fatal)
            #expect(failure.message == "cannot read \(missing)")
        }
    }

    @Test func aCancelledRunStopsBeforeItsNextPart() async throws {
        try await withFolder { folder in
            let item = try makeFile(in: folder)
            let run = await Task {
                // Cancelled as a timeout or Ctrl-C would cancel it; the stage checks before each part.
                withUnsafeCurrentTask { $0?.cancel() }
                return await StageHarness(stateFolder: folder).run(
                    ChecksumStage.self, options: ["partSize": "1MiB"], item: item)
            }.value
            #expect(throws: CancellationError.self) { try run.outputs.get() }
            #expect(run.progress.isEmpty)
        }
    }
}
