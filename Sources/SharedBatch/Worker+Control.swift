import Foundation
import Logging
import NIOConcurrencyHelpers
import PipelineKit
import StageKit

/// A worker's contact with the database besides its claims: the lease renewals, its running stages' progress, and
/// what it is asked to do (``WorkerRequest``).
extension Worker {
    /// Whether it claims nothing new: it was asked to drain or to stop.
    var draining: Bool {
        state.withLockedValue { $0.request != nil }
    }

    /// Publishes the running stages when they changed (at most once a second, ``WorkerControl/publishInterval``),
    /// and looks for a request every ``WorkerControl/lookInterval`` when it had nothing to publish: a primary key's
    /// write or read, nothing more. Runs until cancelled.
    func followRequests() async {
        let clock = ContinuousClock()
        var looked = clock.now
        while !Task.isCancelled {
            try? await Task.sleep(for: WorkerControl.publishInterval)
            guard !Task.isCancelled else { break }
            let request: WorkerRequest?
            do {
                if case .some(let change) = progress.takeChange() {
                    do {
                        request = try await queue.publish(progress: change, of: identity.id)
                    } catch {
                        progress.markUnwritten()
                        throw error
                    }
                } else if clock.now - looked >= WorkerControl.lookInterval {
                    request = try await queue.request(of: identity.id)
                } else {
                    continue
                }
            } catch {
                // The heartbeat says when the database is away; its next look is soon enough.
                continue
            }
            looked = clock.now
            if let request { apply(request) }
        }
    }

    /// Takes up what the worker was asked, once: a drain stops the claims (the items held run to their end), a
    /// stop cancels the claiming task as SIGTERM does: the stages stop at their next checkpoint and the items
    /// go back to the queue at once.
    func apply(_ request: WorkerRequest) {
        let (first, claiming) = state.withLockedValue { state -> (Bool, Task<Void, Never>?) in
            guard state.request != request, state.request != .stop else { return (false, nil) }
            state.request = request
            return (true, state.claiming)
        }
        guard first else { return }
        let held = leases.all.count
        switch request {
        case .drain:
            sink.emit(
                LogLine(
                    level: .notice, item: nil, stage: nil,
                    message:
                        "asked to drain: finishing the \(held) item(s) this worker holds, claiming nothing new, then stopping"
                ))
        case .stop:
            sink.emit(
                LogLine(
                    level: .notice, item: nil, stage: nil,
                    message:
                        "asked to stop: stopping its \(held) item(s) at their next checkpoint; they go back to the queue for another worker"
                ))
            claiming?.cancel()
        }
    }

    /// Renews the leases; stops the items whose lease another worker took over, and those whose cancel was
    /// asked for (they run their `onCancel` stages). When the leases could not be renewed for so long that they
    /// are about to run out, every item stops: other workers may take them over, and this one could not write
    /// their checkpoints anyway.
    func heartbeat() async throws {
        let beat: Heartbeat
        do {
            beat = try await queue.heartbeat(
                record, holding: leases.all, lease: settings.lease, patience: settings.heartbeat)
        } catch {
            sink.emit(LogLine(level: .warning, item: nil, stage: nil, message: "cannot renew leases: \(error)"))
            let (silent, working) = state.withLockedValue { (ContinuousClock.now - $0.renewed, $0.working) }
            if silent >= settings.silenceLimit, !working.isEmpty {
                sink.emit(
                    LogLine(
                        level: .warning, item: nil, stage: nil,
                        message:
                            "no contact with the database for \(silent.components.seconds) s: stopping \(working.count) item(s) before their leases run out; they resume from their checkpoints"
                    ))
                state.withLockedValue { state in state.letGo.formUnion(working.keys.filter { state.working[$0] != nil })
                }
                for (item, work) in working {
                    leases.lose(item)
                    work.task.cancel()
                }
            }
            throw error
        }
        state.withLockedValue { $0.renewed = .now }
        if let queued = beat.queued { metrics.queueDepth(queued) }
        let working = state.withLockedValue { $0.working }
        for item in beat.lost {
            leases.lose(item)
            working[item]?.task.cancel()
        }
        for item in beat.cancelRequested {
            working[item]?.runner.cancelRunning([item])
        }
        if let request = beat.request { apply(request) }
    }
}
