import CPipelinePlugin
import Foundation
import Logging
import NIOConcurrencyHelpers
import PipelineKit
import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// One run of a plugin stage: the callbacks the plugin calls, and the continuation its finish resumes.
/// Unchecked: `state` is touched only under `lock`, and `host` is set up once in `init` and only read after.
final class PluginRun: @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<JSONValue, any Error>?
        var handle: UnsafeMutableRawPointer?
        var finished = false
        var cancelled = false
        /// The host calls in progress that wait for as long as something else takes: a cancel ends them.
        var waits: [Int: Task<Void, Never>] = [:]
        var nextWait = 0
    }

    let context: StageContext
    let host: UnsafeMutablePointer<pipeline_stage_host>
    private var state = State()
    private let lock = NSLock()

    private func locked<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    init(context: StageContext) {
        self.context = context
        host = .allocate(capacity: 1)
        host.initialize(
            to: pipeline_stage_host(
                context: nil,
                progress: { context, completed, total, unit in
                    guard let run = PluginRun.from(context) else { return }
                    let units: [StageProgress.Unit] = [.bytes, .seconds, .items]
                    run.context.reportProgress(
                        StageProgress(
                            completed: completed, total: total < 0 ? nil : total,
                            unit: units.indices.contains(Int(unit)) ? units[Int(unit)] : .items))
                },
                log: { context, level, message in
                    guard let run = PluginRun.from(context), let message else { return }
                    run.context.logger.log(level: Logger.Level(pluginCode: level), "\(String(cString: message))")
                },
                checkpoint: { context, json in
                    guard let run = PluginRun.from(context), let json,
                        let value = try? JSONValue(parsing: String(cString: json))
                    else { return 1 }
                    let checkpointer = run.context.checkpointer
                    return PluginRun.waitFor { try await checkpointer.saveCheckpoint(value) } == nil ? 1 : 0
                },
                idempotency_key: { context, name, buffer, length in
                    guard let run = PluginRun.from(context), let name, let buffer else { return 1 }
                    let (checkpointer, keyName) = (run.context.checkpointer, String(cString: name))
                    guard let key = PluginRun.waitFor({ try await checkpointer.idempotencyKey(keyName) }),
                        key.utf8.count < length
                    else { return 1 }
                    _ = key.withCString { strncpy(buffer, $0, length) }
                    return 0
                },
                finish: { context, status, result in
                    PluginRun.from(context)?.finish(status: status, result: result.map { String(cString: $0) } ?? "")
                },
                retrying: { context, attempt, delay, error in
                    guard let run = PluginRun.from(context) else { return }
                    let failure = PluginRun.failure(error.map { String(cString: $0) } ?? "", disposition: .retryable())
                    run.context.retrying(attempt: Int(attempt), after: .milliseconds(max(0, delay)), because: failure)
                },
                export_wait: { context, bytes, attempt, state, text, length in
                    PluginRun.from(context)?.waitForExport(bytes: bytes, attempt: attempt, state, text, length) ?? 1
                }))
        host.pointee.context = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        host.deinitialize(count: 1)
        host.deallocate()
    }

    /// Runs `body` and blocks the calling thread until it is done: the checkpoint callbacks are
    /// synchronous in the ABI, which requires plugins to call them from threads that may block.
    static func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> T? {
        let result = NIOLockedValueBox<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let value = try? await body()
            result.withLockedValue { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLockedValue { $0 }
    }

    /// Runs `body` and blocks the calling thread until it is done, like ``waitFor(_:)``, for a call that lasts as
    /// long as something else takes (an export): a cancel of the run ends it early, with nil.
    func waitUnlessCancelled<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> T? {
        let result = NIOLockedValueBox<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = Task {
            // What such a call waits on throws only when it is cancelled (``FollowedExport/waitFor(bytes:of:)``
            // throws `CancellationError`): the run is being cancelled, which the nil return tells the plugin as its
            // host call failing, and the plugin's own cancel call tells it why. Nothing else is lost.
            let value = try? await body()
            result.withLockedValue { $0 = value }
            done.signal()
        }
        let id = locked { state -> Int in
            defer { state.nextWait += 1 }
            state.waits[state.nextWait] = task
            if state.cancelled { task.cancel() }
            return state.nextWait
        }
        done.wait()
        locked { _ = $0.waits.removeValue(forKey: id) }
        return result.withLockedValue { $0 }
    }

    /// `export_wait`: waits for the followed export as the ABI says, and writes its state and the file to read (or
    /// why it failed) into the plugin's buffers.
    func waitForExport(
        bytes: Int64, attempt: Int32, _ state: UnsafeMutablePointer<pipeline_export_state>?,
        _ text: UnsafeMutablePointer<CChar>?, _ length: Int
    ) -> Int32 {
        guard let state, let text, let export = context.services[FollowedExportKey.self],
            let known = waitUnlessCancelled({ try await export.waitFor(bytes: bytes, of: Int(attempt)) })
        else { return 1 }
        state.pointee = Self.exportState(known)
        let said = known.failure ?? known.file ?? ""
        // A reason may be cut to fit; a path may not.
        guard known.failure != nil || said.utf8.count < length else { return 1 }
        _ = said.withCString { strncpy(text, $0, length) }
        if length > 0 { text[length - 1] = 0 }
        return 0
    }

    /// A followed export's state as the ABI carries it.
    static func exportState(_ known: ExportState) -> pipeline_export_state {
        let status =
            known.failure != nil
            ? PIPELINE_EXPORT_FAILED : known.finishedSize != nil ? PIPELINE_EXPORT_FINISHED : PIPELINE_EXPORT_WRITING
        return pipeline_export_state(
            head: known.head, final: known.final, finished_size: known.finishedSize ?? -1,
            attempt: Int32(clamping: known.attempt), rewritten: known.rewritten ? 1 : 0,
            status: Int32(bitPattern: status.rawValue))
    }

    static func from(_ context: UnsafeMutableRawPointer?) -> PluginRun? {
        context.map { Unmanaged<PluginRun>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Keeps the run alive until the plugin finishes.
    func begin(_ continuation: CheckedContinuation<JSONValue, any Error>) {
        locked { $0.continuation = continuation }
        _ = Unmanaged.passRetained(self)
    }

    func started(_ handle: UnsafeMutableRawPointer?) {
        locked { $0.handle = handle }
        if handle == nil {
            finish(
                status: Int32(bitPattern: PIPELINE_STAGE_FATAL.rawValue), result: "the plugin did not start the stage")
        }
    }

    /// Asks the plugin to stop, unless it already finished (the lock keeps the two apart), and ends the host calls
    /// it is waiting in.
    func cancel(using cancel: pipeline_plugin_cancel_fn) {
        locked { state in
            state.cancelled = true
            for wait in state.waits.values { wait.cancel() }
            if !state.finished, let handle = state.handle { cancel(handle) }
        }
    }

    func finish(status: Int32, result: String) {
        let continuation = locked { state -> CheckedContinuation<JSONValue, any Error>? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.continuation = nil }
            return state.continuation
        }
        guard let continuation else { return }
        switch UInt32(bitPattern: status) {
        case PIPELINE_STAGE_SUCCEEDED.rawValue:
            if let outputs = try? JSONValue(parsing: result), case .object = outputs {
                continuation.resume(returning: outputs)
            } else {
                continuation.resume(throwing: StageFailure("the plugin returned outputs that are not a JSON object"))
            }
        case PIPELINE_STAGE_RETRYABLE.rawValue:
            let minimum = (try? JSONValue(parsing: result))?["retryAfter"]?.doubleValue.map { TimeSpan(seconds: $0) }
            continuation.resume(throwing: Self.failure(result, disposition: .retryable(after: minimum?.duration)))
        case PIPELINE_STAGE_CREDENTIALS_EXPIRED.rawValue:
            continuation.resume(throwing: Self.failure(result, disposition: .credentialsExpired))
        case PIPELINE_STAGE_CANCELLED.rawValue: continuation.resume(throwing: CancellationError())
        default: continuation.resume(throwing: Self.failure(result, disposition: .fatal))
        }
        Unmanaged.passUnretained(self).release()
    }

    /// A failure the plugin described as a JSON object with `message` and `kind` (or as plain text).
    static func failure(_ text: String, disposition: FailureDisposition) -> StageFailure {
        let parsed = try? JSONValue(parsing: text)
        let message = parsed?["message"]?.stringValue ?? text
        let kind = parsed?["kind"]?.stringValue.map(ErrorKind.init(rawValue:)) ?? .failed
        return StageFailure(message, kind: kind, disposition: disposition)
    }
}
