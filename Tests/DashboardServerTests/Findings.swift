import Foundation
import PipelineKit
import SharedBatch
import StageKit
import Testing

/// The items the finding tests look for, written into either ledger as runs and workers write them: done, failed
/// with three error kinds in three stages (one in a second workflow), running, waiting, cancelled, and names with
/// `%`, `_` and letters of either case.
enum Findings {
    /// Which ledger.
    enum Store: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case stateFolder, sharedBatch
        var testDescription: String { rawValue }
    }

    /// How many plain done items there are besides the others (more than a page of 10 holds, several times).
    static let bulk = 30
    /// The stages of workflow `w`; workflow `v` has only `probe`.
    static let stages = ["probe", "encode", "upload"]

    /// Writes the items, the last one written being `zeta.mov`; with a `queue` (a shared batch), `epsilon%.mp4` is
    /// held by `worker-a` and `omega.mov` waits in the queue.
    static func write(into ledger: any LedgerBrowsing, queue: BatchQueue? = nil) async throws {
        _ = try await ledger.beginRun(
            RunRecord(workflow: "w", file: "w.json", stages: stages), caching: [], sightings: [])
        _ = try await ledger.beginRun(
            RunRecord(workflow: "v", file: "v.json", stages: ["probe"]), caching: [], sightings: [])
        func admit(_ name: String, workflow: String = "w") async throws -> ItemVersion {
            let input = InputItem(path: "/in/\(name)", relativePath: name, size: 10, modified: 0)
            let admission = ItemAdmission(item: nil, newVersion: false, fingerprint: "fp-\(name)", input: input)
            return try await ledger.admit(admission, workflow: workflow).ref
        }
        func stage(_ stage: String, _ status: StageRecord.Status, of item: ItemVersion) async throws {
            try await ledger.save(StageRecord(stage: stage, uses: "exec", status: status, optionsHash: ""), for: item)
        }
        func end(_ item: ItemVersion, _ outcome: ItemOutcome, kind: String? = nil) async throws {
            let result = ItemResult(
                ref: item, fingerprint: nil, path: "", outcome: outcome, reason: kind.map { "bad: \($0)" },
                errorKind: kind.map { ErrorKind(rawValue: $0) })
            try await ledger.finish(item, result: result, digest: nil)
        }
        for index in 0..<bulk { try await end(try await admit("bulk-\(index).mov"), .done) }
        try await end(try await admit("Alpha.mov"), .done)
        let failures = [
            ("beta.mov", "w", "probe", "damaged-input"), ("gamma.MOV", "w", "encode", "output-collision"),
            ("delta_1.mp4", "w", "upload", "http"), ("beta-v.mov", "v", "probe", "damaged-input"),
        ]
        for (name, workflow, failedIn, kind) in failures {
            let item = try await admit(name, workflow: workflow)
            for earlier in stages.prefix(while: { $0 != failedIn }) { try await stage(earlier, .succeeded, of: item) }
            try await stage(failedIn, .failed, of: item)
            try await end(item, .failed, kind: kind)
        }
        let running = try await admit("epsilon%.mp4")
        try await stage("probe", .succeeded, of: running)
        try await stage("encode", .running, of: running)
        let waiting = try await admit("omega.mov")
        if let queue {
            let workflow = try await queue.store(
                SubmittedWorkflow(
                    name: "w", file: "/w.json", document: Data("{}".utf8), vars: [:], digest: "d", stages: stages))
            try await queue.enqueue([running.item: "d", waiting.item: "d"], with: workflow)
            _ = try await queue.claim(for: "worker-a", lease: .seconds(600))
        }
        let cancelled = try await admit("zeta.mov")
        try await ledger.setStatus(.cancelled, of: [cancelled.item])
    }
}
