import Foundation
import PipelineKit
import Synchronization

/// Shows a run to people: a line per finished stage, failure and retry; on a terminal also a live block
/// at the bottom with every running stage (progress, rate, ETA) and the overall count.
final class HumanRenderer: RunEventSink {
    private struct Running {
        var uses: String
        var started: ContinuousClock.Instant
        var progress: StageProgress?
        var firstReport: (time: ContinuousClock.Instant, completed: Int64)?
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
    private let state = Mutex(State())

    /// - Parameter live: redraw a status block (on a terminal) instead of printing periodic progress lines.
    init(live: Bool) {
        self.live = live
    }

    func emit(_ event: RunEvent) {
        state.withLock { state in
            var lines: [String] = []
            var force = true
            switch event {
            case .runStarted(let workflow, let items, let stages):
                state.workflow = workflow
                state.items = items
                lines.append("\(workflow): \(items) item\(items == 1 ? "" : "s") × \(stages) stage\(stages == 1 ? "" : "s")")
            case .itemStarted:
                force = false
            case .stageStarted(let item, let stage, let uses, _):
                let now = ContinuousClock.now
                state.running["\(item) › \(stage)"] = Running(uses: uses, started: now, lastPrinted: now)
            case .stageProgress(let item, let stage, let progress):
                force = false
                let key = "\(item) › \(stage)"
                guard var running = state.running[key] else { break }
                let now = ContinuousClock.now
                if running.firstReport == nil { running.firstReport = (now, progress.completed) }
                running.progress = progress
                if !live && now - running.lastPrinted >= .seconds(5) {
                    running.lastPrinted = now
                    lines.append("  \(key) \(Self.describe(running, now: now))")
                }
                state.running[key] = running
            case .stageRetrying(let item, let stage, let attempt, let delay, let error):
                state.running["\(item) › \(stage)"] = nil
                lines.append("  \(item) › \(stage): attempt \(attempt) failed: \(error); retrying in \(TimeSpan(seconds: delay.seconds))")
            case .stageFinished(let item, let stage, let outcome, let seconds, let error):
                state.running["\(item) › \(stage)"] = nil
                switch outcome {
                case .succeeded: lines.append("  \(item) › \(stage) done in \(TimeSpan(seconds: seconds))")
                case .failed: lines.append("  \(item) › \(stage) FAILED: \(error ?? "unknown error")")
                case .interrupted: lines.append("  \(item) › \(stage) interrupted; it resumes on the next run")
                case .reused, .skipped: force = false
                }
            case .itemFinished(let item, let succeeded, let error, let landed):
                state.finished += 1
                if succeeded {
                    lines.append("✓ \(item)" + (landed.map { " → \($0)" } ?? ""))
                } else if error != "interrupted" {
                    state.failed += 1
                    lines.append("✗ \(item): \(error ?? "failed")")
                }
            case .log(let level, let item, let stage, let message):
                let origin = [item, stage].compactMap { $0 }.joined(separator: " › ")
                lines.append("  \(origin.isEmpty ? "" : origin + ": ")\(level == "info" || level == "notice" ? "" : "[\(level)] ")\(message)")
            case .runFinished(let summary):
                state.running = [:]
                lines.append(Self.describe(summary))
            }
            render(lines, state: &state, force: force)
        }
    }

    /// Prints finished lines above the live block and redraws it (at most ten times a second).
    private func render(_ lines: [String], state: inout State, force: Bool) {
        guard live else {
            for line in lines { Output.line(line) }
            return
        }
        let now = ContinuousClock.now
        if lines.isEmpty, !force, let last = state.lastDraw, now - last < .milliseconds(100) { return }
        state.lastDraw = now
        var text = state.liveLines > 0 ? "\u{1B}[\(state.liveLines)F\u{1B}[J" : ""
        for line in lines { text += line + "\n" }
        let block = liveBlock(state, now: now)
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
        if let first = running.firstReport {
            let seconds = (now - first.time).seconds
            let rate = seconds > 0.5 ? Double(progress.completed - first.completed) / seconds : 0
            if rate > 0 {
                parts.append(progress.unit == .bytes ? "\(ByteCount(Int64(rate)))/s" : String(format: "%.1f/s", rate))
                if let total = progress.total, total > progress.completed {
                    parts.append("ETA \(TimeSpan(seconds: Double(total - progress.completed) / rate))")
                }
            }
        }
        return parts.joined(separator: "  ")
    }

    private static func describe(_ summary: RunSummary) -> String {
        var text = "\(summary.items) item\(summary.items == 1 ? "" : "s"): \(summary.succeeded) succeeded"
        if summary.failed > 0 { text += ", \(summary.failed) failed" }
        text += "; \(summary.stagesRun) stage\(summary.stagesRun == 1 ? "" : "s") ran, \(summary.stagesReused) reused from checkpoints"
        text += " (\(TimeSpan(seconds: summary.seconds)))"
        if summary.interrupted { text += "; interrupted: run the same command again to resume" }
        return text
    }
}

/// `--json`: one JSON object per event and line, for machines.
final class JSONLinesRenderer: RunEventSink {
    func emit(_ event: RunEvent) {
        Output.line(event.json.serialized())
    }
}
