import Foundation
import Logging
import NIOConcurrencyHelpers
import PipelineKit
import StageKit

/// Shows a run to people: a line per finished stage, failure and retry; on a terminal also a live block
/// at the bottom with every running stage (progress, rate, ETA) and the overall count.
final class HumanRenderer: RunEventSink {
    private struct Running {
        var uses: String
        var started: ContinuousClock.Instant
        var progress: StageProgress?
        var rate = ProgressRate()
        var lastPrinted: ContinuousClock.Instant
    }

    private struct State {
        var workflow = ""
        var items = 0
        var finished = 0
        var failed = 0
        var running: [String: Running] = [:]  // "item › stage"
        var liveLines = 0
        var lastDraw: ContinuousClock.Instant?
        let started = ContinuousClock.now
    }

    private let live: Bool
    private let state = NIOLockedValueBox(State())

    /// - Parameter live: redraw a status block (on a terminal) instead of printing periodic progress lines.
    init(live: Bool) {
        self.live = live
    }

    /// Prints what `event` says, in the lines a person reads, and redraws the live block.
    ///
    /// It stays whole: a switch with one short case per event type, each updating the state under the lock
    /// and choosing the lines; split up, the cases would only be scattered away from the switch that reads them.
    func emit(_ event: any RunEvent) {
        state.withLockedValue { state in
            var lines: [String] = []
            var force = true
            switch event {
            case let started as RunStarted:
                state.workflow = started.workflow
                state.items = started.items
                lines.append(
                    "\(started.workflow): \(started.items) item\(started.items == 1 ? "" : "s") × "
                        + "\(started.stages) stage\(started.stages == 1 ? "" : "s")")
            case let started as StageStarted:
                let now = ContinuousClock.now
                state.running["\(started.item) › \(started.stage)"] = Running(
                    uses: started.uses, started: now, lastPrinted: now)
            case let progressed as StageProgressed:
                force = false
                let key = "\(progressed.item) › \(progressed.stage)"
                guard var running = state.running[key] else { break }
                let now = ContinuousClock.now
                running.rate.record(progressed.progress.completed, at: Date())
                running.progress = progressed.progress
                if !live && now - running.lastPrinted >= .seconds(5) {
                    running.lastPrinted = now
                    lines.append("  \(key) \(Self.describe(running, now: now))")
                }
                state.running[key] = running
            case let retrying as StageRetrying:
                state.running["\(retrying.item) › \(retrying.stage)"] = nil
                lines.append(
                    "  \(retrying.item) › \(retrying.stage): attempt \(retrying.attempt) of \(retrying.attempts) failed "
                        + "(\(retrying.error.kind)): \(retrying.error.message); retrying in \(TimeSpan(seconds: retrying.delay.seconds))"
                )
            case let finished as StageFinished:
                let key = "\(finished.item) › \(finished.stage)"
                state.running[key] = nil
                switch finished.outcome {
                case .succeeded: lines.append("  \(key) done in \(TimeSpan(seconds: finished.seconds))")
                case .failed: lines.append("  \(key) FAILED: \(finished.error?.message ?? "unknown error")")
                case .interrupted: lines.append("  \(key) interrupted; it resumes on the next run")
                case .skipped where finished.failedDependency != nil:
                    lines.append("  \(key) skipped: \(finished.reason ?? "a stage it waits for failed")")
                case .reused, .skipped: force = false
                }
            case let finished as ItemFinished:
                state.finished += 1
                switch finished.outcome {
                case .done:
                    lines.append(
                        "✓ \(finished.item)" + (finished.landed.map { " → \($0)" } ?? ""))
                case .failed:
                    state.failed += 1
                    lines.append(
                        "✗ \(finished.item): \(finished.error?.message ?? "failed")")
                case .skipped:
                    lines.append("– \(finished.item): skipped: \(finished.reason ?? "")")
                case .reused, .interrupted: force = false
                }
            case let line as LogLine:
                let origin = [line.item, line.stage].compactMap { $0 }.joined(separator: " › ")
                let level = line.level == .info || line.level == .notice ? "" : "[\(line.level.rawValue)] "
                lines.append("  \(origin.isEmpty ? "" : origin + ": ")\(level)\(line.message)")
            case let finished as RunFinished:
                state.running = [:]
                lines.append(Self.describe(finished.summary))
            default:
                force = false
            }
            render(lines, state: &state, force: force)
        }
    }

    /// Prints finished lines above the live block and redraws it (at most ten times a second). Every line is shown
    /// with its control characters escaped (``Output/shown(_:)``), whatever part of it quotes a file's name: the
    /// item, a stage's error or retry, a log line or a landed path.
    private func render(_ lines: [String], state: inout State, force: Bool) {
        let lines = lines.map(Output.shown)
        guard live else {
            for line in lines { Output.line(line) }
            return
        }
        let now = ContinuousClock.now
        if lines.isEmpty, !force, let last = state.lastDraw, now - last < .milliseconds(100) { return }
        state.lastDraw = now
        var text = state.liveLines > 0 ? "\u{1B}[\(state.liveLines)F\u{1B}[J" : ""
        for line in lines { text += line + "\n" }
        let block = liveBlock(state, now: now).map(Output.shown)
        for line in block { text += line + "\n" }
        state.liveLines = block.count
        Output.write(text)
    }

    private func liveBlock(_ state: State, now: ContinuousClock.Instant) -> [String] {
        guard state.items > 0, state.finished < state.items else { return [] }
        var block = state.running.sorted { $0.key < $1.key }.prefix(8).map { key, running in
            "  ▶ \(key) \(Self.describe(running, now: now))"
        }
        if state.running.count > 8 { block.append("  … and \(state.running.count - 8) more") }
        let elapsed = TimeSpan(seconds: (now - state.started).seconds)
        block.append("[\(state.finished)/\(state.items) items, \(state.failed) failed, \(elapsed)]")
        return block
    }

    private static func describe(_ running: Running, now: ContinuousClock.Instant) -> String {
        let elapsed = TimeSpan(seconds: (now - running.started).seconds)
        guard let progress = running.progress else { return "(\(running.uses)) \(elapsed)" }
        var parts: [String] = []
        let amount = { (value: Int64) -> String in
            switch progress.unit {
            case .bytes: ByteCount(value).description
            case .seconds: TimeSpan(seconds: Double(value)).description
            case .items: "\(value)"
            }
        }
        if let total = progress.total, total > 0 {
            parts.append(String(format: "%3.0f%%", Double(progress.completed) * 100 / Double(total)))
            parts.append("\(amount(progress.completed))/\(amount(total))")
        } else {
            parts.append(amount(progress.completed))
        }
        if let rate = running.rate.perSecond, rate > 0 {
            parts.append(progress.unit == .bytes ? "\(ByteCount(Int64(rate)))/s" : String(format: "%.1f/s", rate))
            let left = ProgressRate.secondsLeft(completed: progress.completed, total: progress.total, perSecond: rate)
            if let left, progress.total.map({ $0 > progress.completed }) == true {
                parts.append("ETA \(TimeSpan(seconds: left))")
            }
        }
        return parts.joined(separator: "  ")
    }

    private static func describe(_ summary: RunSummary) -> String {
        var counts = ["\(summary.succeeded) done"]
        if summary.reused > 0 { counts.append("\(summary.reused) already done") }
        if summary.skipped > 0 {
            let reasons = summary.skipReasons.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
            let shown = reasons.prefix(3).map { "\($0.value) \($0.key)" } + (reasons.count > 3 ? ["…"] : [])
            counts.append("\(summary.skipped) skipped (\(shown.joined(separator: "; ")))")
        }
        if summary.failed > 0 { counts.append("\(summary.failed) failed") }
        // Items a signal cut short or that never started: without them the counts did not add up to the files.
        let unfinished = summary.items - summary.succeeded - summary.reused - summary.skipped - summary.failed
        if summary.interrupted, unfinished > 0 { counts.append("\(unfinished) not finished") }
        var text = "\(summary.items) file\(summary.items == 1 ? "" : "s"): \(counts.joined(separator: ", "))"
        text +=
            "; \(summary.stagesRun) stage\(summary.stagesRun == 1 ? "" : "s") ran, \(summary.stagesReused) reused from checkpoints"
        if summary.bytes > 0 { text += ", \(ByteCount(summary.bytes)) processed" }
        text += " (\(TimeSpan(seconds: summary.seconds)))"
        if summary.interrupted { text += "; interrupted: run the same command again to resume" }
        return text
    }
}

/// `--json`: one JSON object per event and line, for machines.
final class JSONLinesRenderer: RunEventSink {
    func emit(_ event: any RunEvent) {
        Output.line(event.json.serialized())
    }
}
