import Foundation
import PipelineKit

import struct StageKit.InputItem
import enum StageKit.JSONValue

/// `run --report FILE`: one JSON record per file of the run, with each stage's checkpoint (secrets masked).
enum RunReport {
    /// Why a report could not be written at `path`, found before the run rather than after hours of work; nil
    /// when its folder is there and writable and the path is not a folder.
    static func unwritable(_ path: String) -> String? {
        guard !path.isEmpty else { return "give a file name" }
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), isFolder.boolValue {
            return "it is a folder; give a file name"
        }
        if path.hasSuffix("/") { return "it names a folder; give a file name" }
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            return "the folder \(folder) does not exist"
        }
        return FileManager.default.isWritableFile(atPath: folder) ? nil : "the folder \(folder) is not writable"
    }

    /// Writes the report of `outcome`; a report that cannot be written ends the command with exit code 1.
    static func write(
        _ outcome: RunOutcome, workflow: Workflow, ledger: any StateStore, redactor: SecretRedactor, to path: String
    ) async throws {
        let checkpoints: [Int64: [String: StageRecord]]
        do {
            checkpoints = try await ledger.checkpoints(
                workflow: workflow.name, items: Set(outcome.results.compactMap { $0.ref?.item }))
        } catch {
            throw CommandFailure(.failed, "pipeline: cannot write the report \(path): \(error)")
        }
        let items = outcome.results.map { result in
            record(result, stages: result.ref.flatMap { checkpoints[$0.item] } ?? [:], workflow: workflow)
        }
        let report: JSONValue = [
            "workflow": .string(workflow.name), "summary": .object(outcome.summary.fields), "items": .array(items),
        ]
        do {
            try redactor.shown(report).serializedData(pretty: true).write(
                to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CommandFailure(.failed, "pipeline: cannot write the report \(path): \(error)")
        }
    }

    /// One item's record: identity, path, outcome, reason, and its stages in workflow order.
    static func record(_ result: ItemResult, stages: [String: StageRecord], workflow: Workflow) -> JSONValue {
        let graph = workflow.graph
        let stageRecords: [JSONValue] = (workflow.stages + workflow.onCancel).enumerated().compactMap { index, spec in
            guard let record = stages[spec.id] else { return nil }
            // To the millisecond where the checkpoint kept it; a checkpoint from before that has its dates only.
            var seconds = record.seconds
            if seconds == nil, let started = record.startedAt, let finished = record.finishedAt {
                seconds = finished.timeIntervalSince(started)
            }
            return [
                "stage": .string(spec.id), "uses": .string(record.uses), "status": .string(record.status.rawValue),
                "attempts": .int(record.attempts), "seconds": seconds.map(JSONValue.double) ?? .null,
                "outputs": record.outputs ?? .null, "error": record.error.map(JSONValue.string) ?? .null,
                "errorKind": record.errorKind.map { .string($0.rawValue) } ?? .null,
                "reason": record.reason.map(JSONValue.string) ?? .null,
                "after": index < graph.ids.count ? .array(graph.waitIDs(of: index).map(JSONValue.string)) : .null,
            ]
        }
        return [
            "item": result.ref.map { .int(Int($0.item)) } ?? .null,
            "version": result.ref.map { .int($0.version) } ?? .null,
            "fingerprint": result.fingerprint.map(JSONValue.string) ?? .null, "path": .string(result.path),
            "outcome": .string(result.outcome.rawValue), "reason": result.reason.map(JSONValue.string) ?? .null,
            "errorKind": result.errorKind.map { .string($0.rawValue) } ?? .null,
            "seconds": .double(result.seconds), "bytes": .int(Int(result.bytes)), "stages": .array(stageRecords),
        ]
    }
}
