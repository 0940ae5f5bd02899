public import CPipelinePlugin
import Foundation
import Logging
import NIOConcurrencyHelpers
public import StageKit

/// Turns ordinary `Stage` types into a plugin that `pipeline` loads at run time (`--plugin` or a
/// workflow's `"plugins"`). Write one function in the plugin and build it as a dynamic library:
///
/// ```swift
/// import PipelinePluginSDK
///
/// @_cdecl("pipeline_plugin_register")
/// public func registerStages(_ registrar: PluginRegistrar?) -> Int32 {
///     PluginExport.register([HelloStage.self], with: registrar)
/// }
/// ```
///
/// The plugin links its own copy of the stage API (StageKit); only C and JSON cross into the host, so
/// nothing depends on both sides sharing Swift types, and a plugin built for another ABI version is refused.
/// What `pipeline_plugin_register` receives from the host.
public typealias PluginRegistrar = UnsafePointer<pipeline_plugin_registrar>

/// Exports a plugin's stages to the host.
public enum PluginExport {
    private static let stages = NIOLockedValueBox<[any Stage.Type]>([])

    /// Registers `stages` with the host; returns what `pipeline_plugin_register` must return.
    public static func register(_ types: [any Stage.Type], with registrar: PluginRegistrar?) -> Int32 {
        guard let registrar = registrar?.pointee else { return 1 }
        stages.withLockedValue { $0 = types }
        for (index, stage) in types.enumerated() {
            let message: JSONValue
            do {
                message = [
                    "type": .string(stage.stageType), "summary": .string(stage.summary),
                    "optionSchema": try JSONValue(encoding: stage.optionSchema),
                    "outputSchema": try JSONValue(encoding: stage.outputSchema),
                    "resource": .string(stage.resource.rawValue), "readsMediaInput": .bool(stage.readsMediaInput),
                    "retriesItself": .bool(stage.retriesItself), "streamRole": .string(stage.streamRole.rawValue),
                    "inputFileOption": stage.inputFileOption.isEmpty ? .null : .string(stage.inputFileOption),
                    "landingOutput": stage.landingOutput.isEmpty ? .null : .string(stage.landingOutput),
                ]
            } catch {
                registrar.fail(registrar.context, "cannot describe stage \(stage.stageType): \(error)")
                return 1
            }
            guard registrar.register_stage(registrar.context, Int32(index), message.serialized()) == 0 else { return 1 }
        }
        return 0
    }

    /// The outputs stage `index` declares for a `with` object (called through `pipeline_plugin_outputs`), as
    /// JSON; nil when there is no such stage.
    static func outputs(_ index: Int32, with text: String) -> String? {
        guard let stage = registered(index) else { return nil }
        // A `with` the host cannot have sent (it parsed it from the workflow) is no options at all.
        let with = (try? JSONValue(parsing: text)) ?? .object([:])
        return try? JSONValue(encoding: stage.outputSchema(for: with)).serialized()
    }

    /// The registered stage number `index`; nil when there is none.
    static func registered(_ index: Int32) -> (any Stage.Type)? {
        stages.withLockedValue { $0.indices.contains(Int(index)) ? $0[Int(index)] : nil }
    }

    /// Why `stage` cannot stream with a `with` object on the inputs the host summarised (called through
    /// `pipeline_plugin_stream_refusal`); nil when it can.
    static func streamRefusal(of stage: any Stage.Type, with text: String, inputs: String) -> String? {
        // Values the host cannot have sent (it made them) are no options and nothing known of the inputs.
        let with = (try? JSONValue(parsing: text)) ?? .object([:])
        let summary =
            (try? JSONValue(parsing: inputs).decode(as: InputSummary.self)) ?? InputSummary(isInputFile: false)
        return stage.streamRefusal(with: with, inputs: summary)
    }

    /// Starts stage `index` (called through `pipeline_plugin_start`).
    static func start(_ index: Int32, request text: String, host: pipeline_stage_host) -> UnsafeMutableRawPointer? {
        let bridge = HostBridge(host)
        guard let stage = registered(index), let request = try? JSONValue(parsing: text),
            let item = try? (request["item"] ?? .null).decode(as: InputItem.self)
        else {
            bridge.finish(.fatal, failure: StageFailure("the plugin cannot run stage \(index) with this request"))
            return nil
        }
        var services = ServiceValues()
        if request["followsExport"] == .bool(true) { services[FollowedExportKey.self] = HostExport(bridge: bridge) }
        let context = StageContext(
            stageID: request["stageID"]?.stringValue ?? stage.stageType, stageType: stage.stageType, item: item,
            attempt: request["attempt"]?.intValue ?? 1,
            logger: Logger(label: stage.stageType) { _ in HostLogHandler(bridge: bridge) },
            scratchFolder: URL(fileURLWithPath: request["scratchFolder"]?.stringValue ?? NSTemporaryDirectory()),
            services: services,
            previousOutputs: request["previousOutputs"] == .null ? nil : request["previousOutputs"],
            savedCheckpoint: request["resume"] == .null ? nil : request["resume"],
            checkpointer: bridge, progress: bridge.progress,
            retryPolicy: request["retryPolicy"].flatMap(RetryPolicy.init(json:)) ?? .standard,
            retrying: bridge.retrying)
        let options = request["options"] ?? .object([:])
        // The handle stays valid until the run has called finish (the host cancels only before that).
        let handle = Unmanaged.passRetained(RunningStage())
        let owner = UnsafeSendable(handle)
        handle.takeUnretainedValue().task.withLockedValue { task in
            task = Task {
                do {
                    let outputs = try await stage.run(json: options, context: context)
                    bridge.finish(.succeeded, outputs.serialized())
                } catch is CancellationError {
                    bridge.finish(.cancelled, "")
                } catch {
                    let classified = error as? any ClassifiedError
                    let status: HostBridge.Status =
                        switch classified?.disposition ?? .fatal {
                        case .retryable: .retryable
                        case .credentialsExpired: .credentialsExpired
                        case .fatal: .fatal
                        }
                    bridge.finish(status, failure: error)
                }
                owner.value.release()
            }
        }
        return handle.toOpaque()
    }
}

/// A started run: the host's handle, released when the run has finished.
final class RunningStage: Sendable {
    let task = NIOLockedValueBox<Task<Void, Never>?>(nil)
}

/// Carries a value across tasks where the compiler cannot see that it is safe: the run's retained handle
/// (released once, by the run's task) and the host's C table (callable from any thread, by the ABI).
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}

/// The host's callbacks, as the stage API wants them. Unchecked: it holds only the host's C table, whose
/// callbacks the ABI allows from any thread, and never changes it.
final class HostBridge: StageCheckpointing, @unchecked Sendable {
    enum Status: Int32 {
        case succeeded = 0, retryable, fatal, credentialsExpired, cancelled
    }

    private let host: pipeline_stage_host

    init(_ host: pipeline_stage_host) {
        self.host = host
    }

    func finish(_ status: Status, _ result: String) {
        host.finish(host.context, status.rawValue, result)
    }

    /// Finishes with a failure: its message and kind as a JSON object (a host that predates kinds shows it
    /// as text).
    func finish(_ status: Status, failure: any Error) {
        finish(status, Self.describe(failure))
    }

    /// A failure as the host reads it: a JSON object with its message, its kind and, when it asks for a
    /// minimum wait before a retry (Retry-After), `retryAfter` in seconds.
    static func describe(_ failure: any Error) -> String {
        let classified = failure as? any ClassifiedError
        var message: [String: JSONValue] = [
            "message": .string("\(failure)"), "kind": .string((classified?.kind ?? .failed).rawValue),
        ]
        if case .retryable(let minimum?) = classified?.disposition {
            message["retryAfter"] = .double(minimum / .seconds(1))
        }
        return JSONValue.object(message).serialized()
    }

    /// Tells the host about a retry the stage makes by itself, so the run shows it as its own.
    func retrying(_ retry: StageRetry) {
        let milliseconds = Int64((retry.delay / .milliseconds(1)).rounded())
        host.retrying(host.context, Int32(clamping: retry.attempt), milliseconds, Self.describe(retry.error))
    }

    func progress(_ progress: StageProgress) {
        let unit: Int32 = progress.unit == .bytes ? 0 : progress.unit == .seconds ? 1 : 2
        host.progress(host.context, progress.completed, progress.total ?? -1, unit)
    }

    func log(_ level: Logger.Level, _ message: String) {
        host.log(host.context, level.pluginCode, message)
    }

    /// The host's `export_wait`, which blocks until the export is written far enough (for as long as it takes), so
    /// it runs on a thread of its own; nil when the host has no answer (the run follows no export, or is being
    /// cancelled).
    func waitForExport(bytes: Int64, attempt: Int) async -> ExportState? {
        let host = UnsafeSendable(host)
        return await BlockingWork.runLong { () -> ExportState? in
            var state = pipeline_export_state()
            var text = [CChar](repeating: 0, count: 4097)
            guard
                host.value.export_wait(host.value.context, bytes, Int32(clamping: attempt), &state, &text, text.count)
                    == 0
            else { return nil }
            let said = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let failed = UInt32(bitPattern: state.status) == PIPELINE_EXPORT_FAILED.rawValue
            return ExportState(
                file: failed || said.isEmpty ? nil : said, head: state.head, final: state.final,
                finishedSize: state.finished_size < 0 ? nil : state.finished_size, attempt: Int(state.attempt),
                rewritten: state.rewritten != 0, failure: failed ? said : nil)
        }
    }

    /// The host's checkpoint call blocks until the data is durable, so it runs on ``BlockingWork``.
    func saveCheckpoint(_ value: JSONValue) async throws {
        let (host, text) = (UnsafeSendable(host), value.serialized())
        let status = try await BlockingWork.run { host.value.checkpoint(host.value.context, text) }
        guard status == 0 else { throw StageFailure("the host could not save the checkpoint", kind: .state) }
    }

    /// The host's key call blocks until the key is durable, so it runs on ``BlockingWork``.
    func idempotencyKey(_ name: String) async throws -> String {
        let host = UnsafeSendable(host)
        let key = try await BlockingWork.run { () -> String? in
            var buffer = [CChar](repeating: 0, count: 128)
            guard host.value.idempotency_key(host.value.context, name, &buffer, buffer.count) == 0 else { return nil }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        guard let key else { throw StageFailure("the host could not record the idempotency key \(name)", kind: .state) }
        return key
    }
}

/// The export a follower streams, read through the host's `export_wait`.
struct HostExport: FollowedExport {
    let bridge: HostBridge

    func waitFor(bytes: Int64, of attempt: Int) async throws -> ExportState {
        let answer = await bridge.waitForExport(bytes: bytes, attempt: attempt)
        try Task.checkCancellation()
        guard let answer else { throw StageFailure("the host could not say how far the export is written") }
        return answer
    }
}

/// swift-log lines of a plugin stage, sent to the host.
struct HostLogHandler: LogHandler {
    let bridge: HostBridge
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        bridge.log(event.level, "\(event.message)")
    }
}

/// The ABI version the plugin was built with.
@_cdecl("pipeline_plugin_abi_version")
public func pipelinePluginABIVersion() -> Int32 {
    pipeline_plugin_header_abi_version()
}

/// The outputs a stage declares for a workflow's `with` object, for the host's checks.
@_cdecl("pipeline_plugin_outputs")
public func pipelinePluginOutputs(
    _ stage: Int32, _ with: UnsafePointer<CChar>?, _ context: UnsafeMutableRawPointer?,
    _ deliver: pipeline_plugin_text_fn?
) -> Int32 {
    guard let with, let deliver, let outputs = PluginExport.outputs(stage, with: String(cString: with)) else {
        return 1
    }
    deliver(context, outputs)
    return 0
}

/// Why a stage cannot stream with a workflow's `with` object, for the host's checks.
@_cdecl("pipeline_plugin_stream_refusal")
public func pipelinePluginStreamRefusal(
    _ stage: Int32, _ with: UnsafePointer<CChar>?, _ inputs: UnsafePointer<CChar>?, _ context: UnsafeMutableRawPointer?,
    _ deliver: pipeline_plugin_text_fn?
) -> Int32 {
    guard let with, let inputs, let deliver, let type = PluginExport.registered(stage) else { return 1 }
    if let refusal = PluginExport.streamRefusal(
        of: type, with: String(cString: with), inputs: String(cString: inputs))
    {
        deliver(context, refusal)
    }
    return 0
}

/// Starts a stage run for the host.
@_cdecl("pipeline_plugin_start")
public func pipelinePluginStart(
    _ stage: Int32, _ request: UnsafePointer<CChar>?, _ host: UnsafePointer<pipeline_stage_host>?
) -> UnsafeMutableRawPointer? {
    guard let request, let host else { return nil }
    return PluginExport.start(stage, request: String(cString: request), host: host.pointee)
}

/// Cancels a run for the host, and releases the run's handle.
@_cdecl("pipeline_plugin_cancel")
public func pipelinePluginCancel(_ handle: UnsafeMutableRawPointer?) {
    guard let handle else { return }
    Unmanaged<RunningStage>.fromOpaque(handle).takeUnretainedValue().task.withLockedValue { $0?.cancel() }
}
