import Foundation
import GRDB
import Logging
import NIOConcurrencyHelpers
import StageKit
import Testing

@testable import PipelineKit

/// What a run keeps of its attempts in a state folder's ledger: an attempt that failed, with its error and the end of
/// what it logged; no attempt row for a stage's success, whose checkpoint keeps the end of what it logged.
@Suite struct AttemptHistoryTests {
    @Test func aFailedAttemptKeepsItsErrorAndTheEndOfItsLogLines() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        try await sandbox.run(
            """
            {"version": 1, "name": "t", "stages": [
              {"id": "a", "uses": "test.complaining", "with": {"key": "\(key)", "failTimes": 1, "warnings": 50},
               "retry": {"attempts": 2, "initialDelay": "10ms"}},
              {"id": "b", "uses": "test.probe", "with": {"key": "\(key)-b"}}
            ]}
            """, registry: Self.registry)
        let item = try #require(try await sandbox.item())
        #expect(item.status == .succeeded)
        let ledger = try SQLiteLedger(readingOnly: sandbox.state)
        defer { try? ledger.close() }
        let history = try #require(try await ledger.history(of: item.id))
        #expect(history.versions.map(\.version) == [1])
        #expect(history.attempts.map(\.stage) == ["a"], "a success adds nothing, even one that logged warnings")
        let failed = history.attempts[0]
        #expect(failed.outcome == .failed && failed.attempt == 1 && failed.version == 1)
        #expect(failed.error == "flaky 1" && failed.errorKind == .network)
        #expect(failed.log.count == AttemptLog.lineLimit)
        #expect(failed.log.last == "warning: complaint 49 of run 1")
        #expect(failed.log.first == "warning: complaint 10 of run 1")
        #expect(!failed.log.contains { $0.contains("detail") }, "lines below the run's level are not kept")
        #expect(failed.startedAt <= failed.finishedAt && failed.seconds >= 0)
    }

    /// A success that logged warnings (as FFmpeg does for many common files) writes no attempt row; its checkpoint
    /// keeps the lines it logged at the run's level.
    @Test func aSuccessAddsNoAttemptRowButKeepsItsLinesInItsCheckpoint() async throws {
        let sandbox = try Sandbox(files: 3)
        let key = UUID().uuidString
        try await sandbox.run(
            """
            {"version": 1, "name": "t", "stages": [
              {"id": "a", "uses": "test.complaining", "with": {"key": "\(key)-${input.stem}", "warnings": 3}},
              {"id": "b", "uses": "test.probe", "with": {"key": "\(key)-b-${input.stem}"}}
            ]}
            """, registry: Self.registry)
        let rows = try await DatabaseQueue(path: sandbox.state.appendingPathComponent(SQLiteLedger.fileName).path).read
        {
            try Int.fetchOne($0, sql: "SELECT count(*) FROM attempts")
        }
        #expect(rows == 0)
        let complaints = (0..<3).map { "warning: complaint \($0) of run 1" }
        for file in 0..<3 { #expect(try await sandbox.checkpoint("a", file: file)?.log == complaints) }
        #expect(try await sandbox.checkpoint("b")?.log == nil, "a stage that logged nothing keeps no lines")
    }

    /// A history write that fails (here refused by a trigger) fails no stage, and the run tells it once.
    @Test func aFailedHistoryWriteIsToldOnceAndFailsNoStage() async throws {
        let sandbox = try Sandbox(files: 3)
        try sandbox.ledger().close()
        let file = sandbox.state.appendingPathComponent(SQLiteLedger.fileName).path
        try await DatabaseQueue(path: file).write {
            try $0.execute(
                sql: "CREATE TRIGGER refuse BEFORE INSERT ON attempts BEGIN SELECT RAISE(ABORT, 'no room'); END")
        }
        let key = UUID().uuidString
        let log = EventLog()
        let summary = try await sandbox.run(
            """
            {"version": 1, "name": "t", "stages": [
              {"id": "a", "uses": "test.complaining", "with": {"key": "\(key)-${input.stem}", "failTimes": 1},
               "retry": {"attempts": 2, "initialDelay": "10ms"}}
            ]}
            """, log: log, registry: Self.registry)
        #expect(summary.succeeded == 3, "the stages' own checkpoints stand")
        let notices = log.all(LogLine.self).filter { $0.message.hasPrefix("cannot keep the history") }
        #expect(notices.count == 1 && notices.first?.level == .notice, "\(notices.map(\.message))")
        #expect(notices.first?.message.contains("no room") == true)
    }

    /// A ledger an earlier pipeline wrote has no attempts table: a reader shows no attempts and adds nothing.
    @Test func aLedgerWithoutAttemptsReadsAsNone() async throws {
        let sandbox = try Sandbox()
        let ledger = try sandbox.ledger()
        let input = InputItem(path: sandbox.path(file: 0), relativePath: "file0.txt", size: 7, modified: 0)
        let item = try await ledger.admit(
            ItemAdmission(item: nil, newVersion: false, fingerprint: "fp", input: input), workflow: "t"
        ).ref.item
        try ledger.close()
        let file = sandbox.state.appendingPathComponent(SQLiteLedger.fileName).path
        try await DatabaseQueue(path: file).write { try $0.execute(sql: "DROP TABLE attempts") }
        let reader = try SQLiteLedger(readingOnly: sandbox.state)
        defer { try? reader.close() }
        let history = try #require(try await reader.history(of: item))
        #expect(history.versions.map(\.path) == [input.path] && history.attempts.isEmpty)
        #expect(try await DatabaseQueue(path: file).read { try $0.tableExists("attempts") } == false)
    }

    /// A record this pipeline cannot read (a newer one's outcome) is left out; the others still show.
    @Test func anAttemptThatDoesNotDecodeIsLeftOut() async throws {
        let sandbox = try Sandbox()
        let ledger = try sandbox.ledger()
        let input = InputItem(path: sandbox.path(file: 0), relativePath: "file0.txt", size: 7, modified: 0)
        let item = try await ledger.admit(
            ItemAdmission(item: nil, newVersion: false, fingerprint: "fp", input: input), workflow: "t"
        ).ref.item
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        try await ledger.recordAttempt(
            StageAttempt(
                version: 1, stage: "a", attempt: 1, startedAt: start, finishedAt: start, seconds: 0, outcome: .failed),
            of: item)
        try ledger.close()
        let file = sandbox.state.appendingPathComponent(SQLiteLedger.fileName).path
        try await DatabaseQueue(path: file).write {
            try $0.execute(
                sql: "INSERT INTO attempts(item, record) VALUES (?, ?)",
                arguments: [item, #"{"outcome": "cancelled", "stage": "a"}"#])
        }
        let reader = try SQLiteLedger(readingOnly: sandbox.state)
        defer { try? reader.close() }
        let history = try #require(try await reader.history(of: item))
        #expect(history.attempts.map(\.outcome) == [.failed])
    }

    /// An error keeps its last ``StageAttempt/errorLimit`` bytes.
    @Test func anAttemptsErrorIsBounded() {
        let message = String(repeating: "x", count: 10_000) + " the end"
        let attempt = StageAttempt(
            version: 1, stage: "a", attempt: 1, startedAt: Date(), finishedAt: Date(), seconds: 0, outcome: .failed,
            error: FailureReport(message: message, kind: .commandFailed))
        let error = attempt.error ?? ""
        #expect(error.utf8.count <= StageAttempt.errorLimit && error.hasSuffix("x the end") && error.hasPrefix("…"))
    }

    /// A line longer than the whole tail keeps its end, cut where a character starts.
    @Test func theLogTailIsBoundedInBytes() {
        let log = AttemptLog()
        log.append(String(repeating: "é", count: 10_000) + " the end", level: .error)
        log.append("short\n\n  \nlast", level: .notice)
        let lines = log.lines
        #expect(
            lines.count == 2 && lines.last == "notice: last", "the long line went to make room, blank lines skipped")
        let single = AttemptLog()
        single.append(String(repeating: "é", count: 10_000) + " the end", level: .error)
        let kept = single.lines.first ?? ""
        #expect(kept.hasPrefix("…é") && kept.hasSuffix("é the end"))
        #expect(kept.utf8.count <= AttemptLog.byteLimit)
    }

    static var registry: StageRegistry {
        var registry = Sandbox.registry
        do {
            try registry.register(ComplainingStage.self)
        } catch {
            Issue.record("test.complaining collides: \(error)")
        }
        return registry
    }
}

/// A stage for tests that logs warnings (and a debug line) each run, and fails its first `failTimes` runs.
struct ComplainingStage: Stage {
    struct Options: StageOptions {
        @Option("Counter name.") var key: String
        @Option("Fail this many times first.") var failTimes = 0
        @Option("Warnings logged each run.") var warnings = 0
    }

    struct Outputs: StageOutputs {
        @Output("How many times it ran.") var run = 0
    }

    static let stageType = "test.complaining"
    static let summary = "Logs warnings, may fail (tests only)."
    static let counts = NIOLockedValueBox<[String: Int]>([:])

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let run = Self.counts.withLockedValue { counts in
            counts[options.key, default: 0] += 1
            return counts[options.key, default: 0]
        }
        for line in 0..<options.warnings { context.logger.warning("complaint \(line) of run \(run)") }
        context.logger.debug("a detail the run does not show")
        if run <= options.failTimes { throw StageFailure.retryable("flaky \(run)", kind: .network) }
        return Outputs(run: run)
    }
}
