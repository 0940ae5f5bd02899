public import Foundation
import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// The state folder (default `./.pipeline`): one folder per workflow run, one per input item, one JSON
/// file per stage, each written atomically and free of secrets. Every read and write runs on
/// ``BlockingWork``, never on the cooperative pool.
///
/// ```
/// .pipeline/lock
/// .pipeline/runs/<workflow>/items/<item>/item.json
/// .pipeline/runs/<workflow>/items/<item>/stages/<stage>.json
/// .pipeline/runs/<workflow>/items/<item>/scratch/<stage>/
/// ```
public struct CheckpointStore: Sendable {
    /// The state folder.
    public let folder: URL
    /// Keeps secrets out of what is written, and puts them back in what is read.
    public let redactor: SecretRedactor

    /// Opens a state folder (nothing is created until something is written).
    public init(folder: URL, redactor: SecretRedactor = .none) {
        self.folder = folder
        self.redactor = redactor
    }

    /// The folder of a workflow's run.
    public func runFolder(_ run: String) -> URL {
        folder.appendingPathComponent("runs").appendingPathComponent(run)
    }

    /// The folder of one item of a run.
    public func itemFolder(run: String, item: String) -> URL {
        runFolder(run).appendingPathComponent("items").appendingPathComponent(item)
    }

    /// The stage file of one item.
    public func stageFile(run: String, item: String, stage: String) -> URL {
        itemFolder(run: run, item: item).appendingPathComponent("stages").appendingPathComponent("\(stage).json")
    }

    /// A stage's scratch folder (created on demand).
    public func scratchFolder(run: String, item: String, stage: String) -> URL {
        itemFolder(run: run, item: item).appendingPathComponent("scratch").appendingPathComponent(stage)
    }

    // MARK: Reading

    /// The checkpoint of a stage, or nil if it never started.
    public func stage(run: String, item: String, stage: String) async throws(StateError) -> StageRecord? {
        let url = stageFile(run: run, item: item, stage: stage)
        guard var record: StageRecord = try await blocking({ () throws(StateError) in try read(url) }) else {
            return nil
        }
        record.outputs = record.outputs.map(redactor.reveal)
        record.resume = record.resume.map(redactor.reveal)
        return record
    }

    /// The record of a workflow's run.
    public func run(_ run: String) async throws(StateError) -> RunRecord? {
        let url = runFolder(run).appendingPathComponent("run.json")
        return try await blocking { () throws(StateError) in try read(url) }
    }

    /// The item facts recorded when its stages last ran.
    public func item(run: String, item: String) async throws(StateError) -> ItemRecord? {
        let url = itemFolder(run: run, item: item).appendingPathComponent("item.json")
        return try await blocking { () throws(StateError) in try read(url) }
    }

    /// The runs in the folder.
    public func runs() -> [String] {
        list(folder.appendingPathComponent("runs"))
    }

    /// The item keys of a run.
    public func items(run: String) -> [String] {
        list(runFolder(run).appendingPathComponent("items"))
    }

    /// The stage ids that have a checkpoint for an item.
    public func stages(run: String, item: String) -> [String] {
        list(itemFolder(run: run, item: item).appendingPathComponent("stages")).compactMap { name in
            name.hasSuffix(".json") ? String(name.dropLast(5)) : nil
        }
    }

    private func list(_ url: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    private func read<T: Decodable>(_ url: URL) throws(StateError) -> T? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw StateError(
                code: .io, message: "cannot read \(url.path): \(error.localizedDescription)", path: url.path)
        }
        let advice =
            "it was not written by a complete checkpoint (edited, or damaged by the disk). "
            + "Delete the file to rerun that stage, or run with --fresh to start the workflow over"
        let parsed: JSONValue
        do {
            parsed = try JSONParser.parse(data).value
        } catch {
            throw StateError(
                code: .corrupt,
                message:
                    "state file \(url.path) is damaged (\(error.message) at \(error.location), byte \(error.offset) of \(data.count)): \(advice)",
                path: url.path)
        }
        if let format = parsed["format"]?.intValue, format > StageRecord.currentFormat {
            throw StateError(
                code: .incompatible,
                message:
                    "state file \(url.path) has format \(format), newer than this pipeline reads (\(StageRecord.currentFormat)); use a newer pipeline or --fresh",
                path: url.path)
        }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(T.self, from: data)
        } catch {
            throw StateError(
                code: .corrupt,
                message: "state file \(url.path) does not have the expected fields (\(error)): \(advice)",
                path: url.path)
        }
    }

    // MARK: Writing

    /// Writes a stage checkpoint atomically, with secrets redacted.
    public func save(_ record: StageRecord, run: String, item: String) async throws(StateError) {
        var stored = record
        stored.outputs = record.outputs.map(redactor.redact)
        stored.resume = record.resume.map(redactor.redact)
        stored.error = record.error.map(redactor.redact)
        let (url, redacted) = (stageFile(run: run, item: item, stage: record.stage), stored)
        try await blocking { () throws(StateError) in try write(redacted, to: url) }
    }

    /// Records what a run looks like (written when it starts).
    public func save(_ record: RunRecord, run: String) async throws(StateError) {
        let url = runFolder(run).appendingPathComponent("run.json")
        try await blocking { () throws(StateError) in try write(record, to: url) }
    }

    /// Records the item's input facts.
    public func save(_ record: ItemRecord, run: String, item: String) async throws(StateError) {
        let url = itemFolder(run: run, item: item).appendingPathComponent("item.json")
        try await blocking { () throws(StateError) in try write(record, to: url) }
    }

    /// Removes stage checkpoints (later stages when an earlier one reruns).
    public func removeStages(_ stages: [String], run: String, item: String) async throws(StateError) {
        guard !stages.isEmpty else { return }
        try await blocking { () throws(StateError) in try removeStagesNow(stages, run: run, item: item) }
    }

    private func removeStagesNow(_ stages: [String], run: String, item: String) throws(StateError) {
        var removed = false
        for stage in stages {
            let url = stageFile(run: run, item: item, stage: stage)
            if unlink(url.path) == 0 {
                removed = true
            } else if errno != ENOENT {
                throw AtomicFile.failure("cannot remove", url)
            }
        }
        if removed {
            try AtomicFile.syncFolder(stageFile(run: run, item: item, stage: "x").deletingLastPathComponent())
        }
    }

    /// Deletes an item's state (after `pipeline cancel`).
    public func removeItem(run: String, item: String) async throws(StateError) {
        let url = itemFolder(run: run, item: item)
        try await blocking { () throws(StateError) in try remove(url) }
    }

    /// Deletes a whole run's state (`--fresh`).
    public func removeRun(_ run: String) async throws(StateError) {
        let url = runFolder(run)
        try await blocking { () throws(StateError) in try remove(url) }
    }

    private func remove(_ url: URL) throws(StateError) {
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            try FileManager.default.removeItem(at: url)
        } catch {
            throw StateError(
                code: .io, message: "cannot remove \(url.path): \(error.localizedDescription)", path: url.path)
        }
    }

    /// Runs file work on ``BlockingWork``, keeping its ``StateError``.
    private func blocking<T: Sendable>(_ body: @escaping @Sendable () throws(StateError) -> T) async throws(StateError)
        -> T
    {
        do {
            return try await BlockingWork.run { try body() }
        } catch let error as StateError {
            throw error
        } catch {
            throw StateError(
                code: .io, message: "cannot use the state folder \(folder.path): \(error)", path: folder.path)
        }
    }

    private func write(_ value: some Encodable, to url: URL) throws(StateError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw StateError(code: .io, message: "cannot encode \(url.path): \(error)", path: url.path)
        }
        try AtomicFile.createFolder(url.deletingLastPathComponent())
        try AtomicFile.write(data, to: url)
    }
}
