import Foundation
import NIOConcurrencyHelpers
import StageKit
import Testing

@testable import PipelineKit

/// The running stages a run publishes for a dashboard: each from its start to its end, with its progress, a rate
/// over the last reports and the ETA it gives, published when stages start or end and at most once a second
/// otherwise; and the state folder's progress file that carries them.
@Suite struct ProgressBoardTests {
    /// A board on a clock the test moves, and what it published.
    final class Board: Sendable {
        let clock = NIOLockedValueBox(Date(timeIntervalSince1970: 1_800_000_000))
        let published = NIOLockedValueBox<[[RunningStage]]>([])
        let passed = EventLog()
        let board: ProgressBoard

        init() {
            let (clock, published) = (clock, published)
            board = ProgressBoard(next: passed, now: { clock.withLockedValue { $0 } }) { stages in
                published.withLockedValue { $0.append(stages) }
            }
        }

        func advance(_ seconds: TimeInterval) { clock.withLockedValue { $0 += seconds } }
        var last: [RunningStage]? { published.withLockedValue { $0.last } }
        var count: Int { published.withLockedValue { $0.count } }

        func progress(_ item: String, _ stage: String, _ completed: Int64, of total: Int64?) {
            board.emit(
                StageProgressed(
                    item: item, stage: stage, progress: StageProgress(completed: completed, total: total, unit: .bytes))
            )
        }
    }

    @Test func aStageIsShownFromItsStartToItsEndWithItsRateAndETA() throws {
        let board = Board()
        board.board.emit(StageStarted(item: "a.mov", stage: "upload", uses: "tus.upload", attempt: 1, attempts: 3))
        #expect(board.count == 1 && board.last?.map(\.stage) == ["upload"] && board.last?.first?.completed == 0)

        // Reports within the second are kept, not published; no rate before a second of reports.
        board.progress("a.mov", "upload", 100, of: 1000)
        board.advance(0.5)
        board.progress("a.mov", "upload", 150, of: 1000)
        #expect(board.count == 1)
        #expect(board.board.running.first?.completed == 150 && board.board.running.first?.rate == nil)

        board.advance(1.5)
        board.progress("a.mov", "upload", 300, of: 1000)
        let shown = try #require(board.last?.first)
        #expect(board.count == 2 && shown.completed == 300 && shown.total == 1000 && shown.unit == .bytes)
        #expect(shown.rate == 100, "200 bytes in the 2 s since the first report")
        #expect(shown.etaSeconds == 7, "700 bytes left at 100 per second")

        // The rate looks back 10 s, from the last report before them: a stall long ago no longer slows it down.
        board.advance(10)
        board.progress("a.mov", "upload", 800, of: 1000)
        board.advance(2)
        board.progress("a.mov", "upload", 900, of: 1000)
        #expect(board.last?.first?.rate == 50, "100 bytes in the 2 s since the report 10 s ago")

        // Another item's stage; the first stage ends, then the other item with its stage still listed.
        board.board.emit(
            StageStarted(item: "b.mov", stage: "export", uses: "ffmpeg.transcode", attempt: 1, attempts: 1))
        #expect(board.last?.map(\.item) == ["a.mov", "b.mov"])
        board.board.emit(StageFinished(item: "a.mov", stage: "upload", outcome: .succeeded, seconds: 27))
        #expect(board.last?.map(\.item) == ["b.mov"])
        board.board.emit(ItemFinished(item: "b.mov", outcome: .failed))
        #expect(board.last == [] && board.board.running.isEmpty)
        #expect(board.passed.events.withLockedValue { $0.count } == 9, "every event goes on to the next sink")
    }

    @Test func aPauseSlowsTheRateDownAndTheLastReportsTimeIsPublished() throws {
        let board = Board()
        board.board.emit(StageStarted(item: "a.mov", stage: "upload", uses: "tus.upload", attempt: 1, attempts: 1))
        for second in 0...2 {
            board.progress("a.mov", "upload", Int64(second) * 100, of: 10_000)
            if second < 2 { board.advance(1) }
        }
        #expect(board.board.running.first?.rate == 100)
        // 20 s without a report, then one: 100 bytes came in 20 s, not in 1 s.
        board.advance(20)
        board.progress("a.mov", "upload", 300, of: 10_000)
        let shown = try #require(board.last?.first)
        #expect(shown.rate == 5, "100 bytes in the 20 s since the last report before the pause")
        #expect(shown.etaSeconds == 1940)
        #expect(shown.reportedAt == Date(timeIntervalSince1970: 1_800_000_022))
        let read = try #require(RunningStage(document: shown.document))
        #expect(read.reportedAt == shown.reportedAt && read.unit == .bytes)
    }

    @Test func aRetriedStageIsShownAgainFromNothing() {
        let board = Board()
        board.board.emit(StageStarted(item: "a.mov", stage: "upload", uses: "tus.upload", attempt: 1, attempts: 2))
        board.progress("a.mov", "upload", 500, of: 1000)
        board.board.emit(
            StageRetrying(
                item: "a.mov", stage: "upload", attempt: 1, attempts: 2, delay: .seconds(1),
                error: FailureReport(message: "connection reset", kind: .network)))
        #expect(board.last == [] && board.board.running.isEmpty, "the failed attempt's progress is gone")
        board.board.emit(StageStarted(item: "a.mov", stage: "upload", uses: "tus.upload", attempt: 2, attempts: 2))
        #expect(board.last?.first?.completed == 0)
    }

    @Test func theProgressFileCarriesTheStagesAndIsGoneWhenTheRunEnds() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("progress-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(ProgressFile.read(in: folder, writtenBy: getpid()).isEmpty)

        let board = Board()
        board.board.emit(StageStarted(item: "clip\u{202E}.mov", stage: "export", uses: "x", attempt: 1, attempts: 1))
        board.advance(2)
        board.progress("clip\u{202E}.mov", "export", 40, of: 100)
        board.advance(2)
        board.progress("clip\u{202E}.mov", "export", 60, of: 100)
        let stages = try #require(board.last)
        ProgressFile.write(stages, workflow: "w", in: folder)
        // Only the process holding the folder is believed: a file another process wrote (a run killed, and the
        // folder held by another process since, or by none) is not read.
        #expect(ProgressFile.read(in: folder, writtenBy: getpid() + 1).isEmpty)
        #expect(ProgressFile.read(in: folder, writtenBy: nil).isEmpty)
        let read = ProgressFile.read(in: folder, writtenBy: getpid())
        #expect(read.keys.sorted() == ["w"])
        let stage = try #require(read["w"]?.first)
        #expect(stage.item == "clip\u{202E}.mov" && stage.completed == 60 && stage.total == 100 && stage.rate == 10)
        #expect(stage.etaSeconds == 4)
        #expect(abs(stage.startedAt.timeIntervalSince(stages[0].startedAt)) < 0.001)
        ProgressFile.remove(in: folder)
        #expect(ProgressFile.read(in: folder, writtenBy: getpid()).isEmpty)
    }
}
