import CPipelinePlugin
import Foundation
import Logging
import NIOConcurrencyHelpers
public import PipelineKit
import StageKit

#if canImport(Glibc)
    import Glibc
#endif

/// A plugin that cannot be used, with the reason and the plugin's path.
public struct PluginError: Error, Sendable, CustomStringConvertible {
    /// The plugin library.
    public var path: String
    /// What is wrong and what to do.
    public var message: String

    public var description: String { "plugin \(path): \(message)" }
}

/// Loads stage plugins: shared libraries that speak the C boundary of `CPipelinePlugin.h` (written with
/// PipelinePluginSDK). A plugin is checked before any of its code runs beyond its ABI version function:
/// a missing file, a file that is not a library, a missing entry point or another ABI version is refused
/// with a clear message.
public enum PluginLoader {
    /// What each ABI version added to the one before (as `CPipelinePlugin.h` lists them), so that the refusal of an
    /// older plugin says what it lacks.
    static let additions: [(version: Int32, what: String)] = [
        (3, "each stage's resource, media input, retries and option-dependent outputs, and the host's retrying"),
        (
            4,
            "each stage's stream role, input-file option, landing output and stream refusal, and the host's export_wait"
        ),
    ]

    /// The stage types a plugin registers, each with `source` = the plugin's path.
    public static func load(_ path: String) throws(PluginError) -> [StageDescriptor] {
        func refuse(_ message: String) -> PluginError { PluginError(path: path, message: message) }
        guard FileManager.default.fileExists(atPath: path) else { throw refuse("no such file") }
        // dlopen looks a name without a slash up on the library path, not in the current folder: `--plugin
        // name.so` means the file here, as it does to `fileExists`. Only that search is stopped; any other path is
        // opened as given, so that the file system resolves it as it did for `fileExists` (removing `..` as text
        // would name another file after a symbolic link: `dir/link/../lib.so`).
        let file = path.contains("/") ? path : "./" + path
        guard let library = dlopen(file, RTLD_NOW | RTLD_LOCAL) else {
            throw refuse(
                "cannot be loaded as a shared library (\(dlerror().map { String(cString: $0) } ?? "unknown error"))")
        }
        func symbol<T>(_ name: String, as type: T.Type) throws(PluginError) -> T {
            guard let address = dlsym(library, name) else {
                throw refuse("does not export \(name): it is not a pipeline plugin (build it with PipelinePluginSDK)")
            }
            return unsafeBitCast(address, to: type)
        }
        let version = try symbol("pipeline_plugin_abi_version", as: pipeline_plugin_abi_version_fn.self)()
        let expected = pipeline_plugin_header_abi_version()
        // An older plugin is refused, not adapted: it cannot say what its stages consume, whether they retry
        // themselves or stream, and guessing would run an upload outside `--transfers`, retry it twice or stream it.
        guard version == expected else {
            let added = Self.additions.filter { $0.version > version && $0.version <= expected }
            let since = added.map { "ABI \($0.version) adds \($0.what)" }.joined(separator: "; ")
            let why = since.isEmpty ? "" : " (\(since))"
            throw refuse(
                "was built for plugin ABI \(version), but this pipeline speaks ABI \(expected)\(why): rebuild it against this pipeline's PipelinePluginSDK"
            )
        }
        let register = try symbol("pipeline_plugin_register", as: pipeline_plugin_register_fn.self)
        let calls = PluginCalls(
            start: try symbol("pipeline_plugin_start", as: pipeline_plugin_start_fn.self),
            cancel: try symbol("pipeline_plugin_cancel", as: pipeline_plugin_cancel_fn.self),
            outputs: try symbol("pipeline_plugin_outputs", as: pipeline_plugin_outputs_fn.self),
            streamRefusal: try symbol("pipeline_plugin_stream_refusal", as: pipeline_plugin_stream_refusal_fn.self))

        let registration = Registration()
        var registrar = pipeline_plugin_registrar(
            abi_version: expected, context: Unmanaged.passUnretained(registration).toOpaque(),
            register_stage: { context, stage, json in
                guard let context, let json else { return 1 }
                Unmanaged<Registration>.fromOpaque(context).takeUnretainedValue().stages.withLockedValue {
                    $0.append((stage, String(cString: json)))
                }
                return 0
            },
            fail: { context, message in
                guard let context, let message else { return }
                Unmanaged<Registration>.fromOpaque(context).takeUnretainedValue().failure.withLockedValue {
                    $0 = String(cString: message)
                }
            })
        let status = withExtendedLifetime(registration) { register(&registrar) }
        guard status == 0 else {
            throw refuse(
                "failed to register its stages: \(registration.failure.withLockedValue { $0 } ?? "status \(status)")")
        }
        var descriptors: [StageDescriptor] = []
        for (index, json) in registration.stages.withLockedValue({ $0 }) {
            descriptors.append(try describe(stage: index, json, calls: calls, path: path))
        }
        return descriptors
    }

    /// The stage number `index` of the plugin at `path`, from the description it registered. A stage that says it
    /// writes a stream is refused: the ABI has no calls for writing one. So is one whose declarations the engine
    /// could not act on, as a compiled stage type would be (a follower that names no option for the file it reads).
    private static func describe(
        stage index: Int32, _ json: String, calls: PluginCalls, path: String
    ) throws(PluginError) -> StageDescriptor {
        guard let message = try? JSONValue(parsing: json), let stageType = message["type"]?.stringValue,
            let optionSchema = try? (message["optionSchema"] ?? .null).decode(as: OptionSchema.self),
            let outputSchema = try? (message["outputSchema"] ?? .null).decode(as: OutputSchema.self),
            let resource = message["resource"]?.stringValue.flatMap(StageResource.init(rawValue:)),
            let readsMediaInput = message["readsMediaInput"]?.boolValue,
            let retriesItself = message["retriesItself"]?.boolValue,
            let streamRole = message["streamRole"]?.stringValue.flatMap(StreamRole.init(rawValue:))
        else {
            throw PluginError(
                path: path, message: "registered a stage with an unreadable description: \(json.prefix(200))")
        }
        guard streamRole != .producer else {
            throw PluginError(
                path: path,
                message:
                    "stage \(stageType) says it writes a stream (streamRole producer), which a plugin stage cannot: it may follow one"
            )
        }
        do {
            return try StageDescriptor(
                stageType: stageType, summary: message["summary"]?.stringValue ?? "", optionSchema: optionSchema,
                outputSchema: outputSchema, source: .plugin(path), resource: resource,
                readsMediaInput: readsMediaInput, retriesItself: retriesItself, streamRole: streamRole,
                inputFileOption: message["inputFileOption"]?.stringValue,
                landingOutput: message["landingOutput"]?.stringValue,
                streamRefusal: { with, inputs in calls.streamRefusal(stage: index, with: with, inputs: inputs) },
                outputs: { with in calls.outputs(stage: index, with: with) ?? outputSchema },
                run: { options, context in try await calls.run(stage: index, options: options, context: context) })
        } catch {
            throw PluginError(path: path, message: error.description)
        }
    }
}

/// The text a plugin hands to a callback during one call.
private final class TextAnswer: Sendable {
    let text = NIOLockedValueBox<String?>(nil)
}

/// What a plugin registered while its register function ran.
private final class Registration: Sendable {
    let stages = NIOLockedValueBox<[(Int32, String)]>([])
    let failure = NIOLockedValueBox<String?>(nil)
}

/// A plugin's start, cancel, outputs and stream refusal functions.
private struct PluginCalls: Sendable {
    let start: pipeline_plugin_start_fn
    let cancel: pipeline_plugin_cancel_fn
    let outputs: pipeline_plugin_outputs_fn
    let streamRefusal: pipeline_plugin_stream_refusal_fn

    /// Why stage `stage` cannot stream with a `with` object on `inputs`; nil when it can, or when the plugin gives
    /// no answer (its stage then streams as its role says, and fails at run time if it cannot).
    func streamRefusal(stage: Int32, with: JSONValue, inputs: InputSummary) -> String? {
        guard let summary = try? JSONValue(encoding: inputs) else { return nil }
        let answer = TextAnswer()
        _ = withExtendedLifetime(answer) {
            streamRefusal(stage, with.serialized(), summary.serialized(), Unmanaged.passUnretained(answer).toOpaque()) {
                context, text in
                guard let context, let text else { return }
                Unmanaged<TextAnswer>.fromOpaque(context).takeUnretainedValue().text.withLockedValue {
                    $0 = String(cString: text)
                }
            }
        }
        return answer.text.withLockedValue { $0 }
    }

    /// The outputs stage `stage` declares for a `with` object; nil when the plugin gives no readable answer.
    func outputs(stage: Int32, with: JSONValue) -> OutputSchema? {
        let answer = TextAnswer()
        let status = withExtendedLifetime(answer) {
            outputs(stage, with.serialized(), Unmanaged.passUnretained(answer).toOpaque()) { context, json in
                guard let context, let json else { return }
                Unmanaged<TextAnswer>.fromOpaque(context).takeUnretainedValue().text.withLockedValue {
                    $0 = String(cString: json)
                }
            }
        }
        guard status == 0, let text = answer.text.withLockedValue({ $0 }) else { return nil }
        return try? JSONValue(parsing: text).decode(as: OutputSchema.self)
    }

    /// Runs stage `stage` in the plugin and waits for its finish callback.
    func run(stage: Int32, options: JSONValue, context: StageContext) async throws -> JSONValue {
        let request: JSONValue = [
            "stageID": .string(context.stageID), "attempt": .int(context.attempt),
            "item": try JSONValue(encoding: context.item),
            "options": options, "resume": context.savedCheckpoint ?? .null,
            "previousOutputs": context.previousOutputs ?? .null, "scratchFolder": .string(context.scratchFolder.path),
            "retryPolicy": context.retryPolicy.json,
            "followsExport": .bool(context.services[FollowedExportKey.self] != nil),
        ]
        let run = PluginRun(context: context)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                run.begin(continuation)
                let handle = withExtendedLifetime(run) { start(stage, request.serialized(), run.host) }
                run.started(handle)
            }
        } onCancel: {
            run.cancel(using: cancel)
        }
    }
}

/// One run of a plugin stage: the callbacks the plugin calls, and the continuation its finish resumes.
/// Unchecked: `state` is touched only under `lock`, and `host` is set up once in `init` and only read after.
private final class PluginRun: @unchecked Sendable {
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
