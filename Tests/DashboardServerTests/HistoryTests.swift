import Foundation
import Hummingbird
import HummingbirdTesting
import PipelineKit
import StageKit
import Testing

@testable import Dashboard

/// `GET /api/items/:id/history` over a state folder's ledger: versions, each stage's attempts in the workflow's order
/// (the recorded ones, then the checkpoint's own), errors and log lines masked, and the item's links.
@Suite struct HistoryTests {
    @Test func anItemsHistoryListsItsVersionsAndEachStagesAttempts() async throws {
        let fixture = try LedgerFixture()
        defer { fixture.remove() }
        _ = try await fixture.ledger.beginRun(
            RunRecord(workflow: "w", file: "w.json", stages: ["probe", "upload"]), caching: [], sightings: [])
        let id = try await fixture.admit("clip.mp4")
        let input = InputItem(path: "/in/clip.mp4", relativePath: "clip.mp4", size: 12, modified: 1)
        let ref = try await fixture.ledger.admit(
            ItemAdmission(item: id, newVersion: true, fingerprint: "fp-2", input: input), workflow: "w"
        ).ref
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        try await fixture.ledger.save(
            checkpoint(
                "upload", attempts: 2, start: start + 10, seconds: 4.5, link: "https://cdn.test/v.mp4?sig=secret",
                log: ["info: put https://cdn.test/v.mp4?sig=secret"]),
            for: ref)
        try await fixture.ledger.save(checkpoint("probe", attempts: 1, start: start, seconds: 0.25), for: ref)
        try await fixture.ledger.recordAttempt(
            StageAttempt(
                version: 2, stage: "upload", attempt: 1, startedAt: start + 1, finishedAt: start + 3, seconds: 2,
                outcome: .failed,
                error: FailureReport(message: "PUT https://cdn.test/v.mp4?sig=secret refused: 503", kind: .network),
                log: ["warning: retry after https://cdn.test/x?token=abc", "error: \u{202E}4pm.exe"]),
            of: id)

        try await fixture.application().test(.router) { client in
            let history = try await ListingTests.get(client, "/api/items/\(id)/history")
            #expect(history["version"] == 2 && history["relativePath"] == "clip.mp4")
            let versions = history["versions"]?.arrayValue ?? []
            #expect(versions.map { $0["version"] } == [1, 2] && versions.map { $0["current"] } == [false, true])
            #expect(versions.last?["path"] == "/in/clip.mp4")
            let stages = versions.last?["stages"]?.arrayValue ?? []
            #expect(stages.map { $0["id"] } == ["probe", "upload"], "the workflow's order, not the times'")
            #expect(stages.first?["seconds"] == 0.25)
            let attempts = stages.last?["attempts"]?.arrayValue ?? []
            #expect(attempts.map { $0["attempt"] } == [1, 2])
            #expect(attempts.map { $0["outcome"] } == ["failed", "succeeded"])
            #expect(attempts.first?["error"] == "PUT https://cdn.test/v.mp4?… refused: 503")
            #expect(attempts.first?["errorKind"] == "network" && attempts.first?["seconds"] == 2.0)
            #expect(attempts.first?["log"] == ["warning: retry after https://cdn.test/x?…", "error: \u{202E}4pm.exe"])
            #expect(attempts.last?["seconds"] == 4.5)
            #expect(attempts.last?["log"] == ["info: put https://cdn.test/v.mp4?…"], "the success's lines, masked")
            #expect(stages.first?["attempts"]?.arrayValue?.first?["log"] == [])
            #expect(history["links"] == ["https://cdn.test/v.mp4?…"])

            let missing = try await client.execute(uri: "/api/items/\(id + 99)/history", method: .get)
            #expect(missing.status == .notFound)
        }
    }

    /// A stage failed at attempt 1; its options changed, and the new attempt 1 succeeded: both rows show.
    @Test func aNewAttemptOneAfterAnOptionsChangeShowsBesideTheFailedOne() async throws {
        let fixture = try LedgerFixture()
        defer { fixture.remove() }
        _ = try await fixture.ledger.beginRun(
            RunRecord(workflow: "w", file: "w.json", stages: ["run"]), caching: [], sightings: [])
        let id = try await fixture.admit("clip.mp4")
        let ref = ItemVersion(item: id, version: 1)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        try await fixture.ledger.recordAttempt(
            StageAttempt(
                version: 1, stage: "run", attempt: 1, startedAt: start, finishedAt: start + 1, seconds: 1,
                outcome: .failed, error: FailureReport(message: "sh exited with status 1", kind: .commandFailed)),
            of: id)
        try await fixture.ledger.save(checkpoint("run", attempts: 1, start: start + 30, seconds: 2), for: ref)

        try await fixture.application().test(.router) { client in
            let history = try await ListingTests.get(client, "/api/items/\(id)/history")
            let stage = history["versions"]?.arrayValue?.last?["stages"]?.arrayValue?.first
            let attempts = stage?["attempts"]?.arrayValue ?? []
            #expect(attempts.map { $0["attempt"] } == [1, 1])
            #expect(attempts.map { $0["outcome"] } == ["failed", "succeeded"], "the success is not hidden")
            #expect(attempts.last?["seconds"] == 2.0)
        }
    }

    private func checkpoint(
        _ stage: String, attempts: Int, start: Date, seconds: Double, link: String? = nil, log: [String]? = nil
    ) -> StageRecord {
        var record = StageRecord(stage: stage, uses: "test", status: .succeeded, optionsHash: "h")
        record.attempts = attempts
        record.startedAt = start
        record.finishedAt = start + seconds
        record.seconds = seconds
        record.outputs = link.map { ["url": .string($0)] }
        record.log = log
        return record
    }
}
