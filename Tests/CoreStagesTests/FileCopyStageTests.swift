import CoreStages
import Foundation
import StageKit
import Testing

@Suite struct FileCopyStageTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("copy-\(UUID().uuidString)")

    private func makeSource(bytes: Int) throws -> URL {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let url = root.appendingPathComponent("source.bin")
        var data = Data(count: bytes)
        data.withUnsafeMutableBytes { buffer in
            for index in 0..<buffer.count { buffer[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 9) }
        }
        try data.write(to: url)
        return url
    }

    @Test func copiesIntoAFolderAtomically() async throws {
        let source = try makeSource(bytes: 3_500_000)
        let harness = StageHarness(stateFolder: root.appendingPathComponent("state"))
        let result = await harness.run(
            FileCopyStage.self,
            options: ["from": .string(source.path), "to": .string(root.appendingPathComponent("out/a").path)])
        let outputs = try result.outputs.get()
        let copy = root.appendingPathComponent("out/a/source.bin")
        #expect(outputs["path"] == .string(copy.path))
        #expect(outputs["size"] == 3_500_000)
        #expect(try Data(contentsOf: copy) == Data(contentsOf: source))
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("out/a/.source.bin.partial").path))
        #expect(result.progress.last?.completed == 3_500_000)
    }

    @Test func resumesAPartialCopyFromItsCheckpoint() async throws {
        let source = try makeSource(bytes: 2_000_000)
        let folder = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // A crashed run left 1 MB durable (checkpointed) and some more bytes after it that were not.
        let bytes = try Data(contentsOf: source)
        var partial = bytes.prefix(1_000_000)
        partial.append(Data(repeating: 0xFF, count: 5000))
        try partial.write(to: folder.appendingPathComponent(".source.bin.partial"))
        var info = stat()
        stat(source.path, &info)
        let resume: JSONValue = [
            "source": .string(source.path), "sourceSize": 2_000_000,
            "sourceModified": .double(Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9),
            "destination": .string(folder.appendingPathComponent("source.bin").path), "copied": 1_000_000,
            "renaming": false,
        ]
        let harness = StageHarness(stateFolder: root.appendingPathComponent("state"))
        let result = await harness.run(
            FileCopyStage.self, options: ["from": .string(source.path), "to": .string(folder.path)], checkpoint: resume)
        _ = try result.outputs.get()
        #expect(try Data(contentsOf: folder.appendingPathComponent("source.bin")) == bytes)
        // Only the part after the checkpoint was copied.
        #expect(result.progress.first.map { $0.completed > 1_000_000 } == true)
    }

    @Test func aMissingSourceIsAClearError() async {
        let harness = StageHarness(stateFolder: root.appendingPathComponent("state"))
        let result = await harness.run(
            FileCopyStage.self, options: ["from": "/nonexistent/x.mp4", "to": .string(root.path)])
        guard case .failure(let error) = result.outputs else {
            Issue.record("copied nothing")
            return
        }
        #expect("\(error)".contains("cannot read /nonexistent/x.mp4: No such file or directory"))
    }
}
