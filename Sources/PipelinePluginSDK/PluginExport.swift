public import CPipelinePlugin
import Foundation
import Logging
public import PipelineKit
import Synchronization

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
/// The plugin links its own copy of the stage API; only C and JSON cross into the host, so nothing
/// depends on both sides sharing Swift types, and a plugin built for another ABI version is refused.
/// What `pipeline_plugin_register` receives from the host.
public typealias PluginRegistrar = UnsafePointer<pipeline_plugin_registrar>

public enum PluginExport {
    private static let stages = Mutex<[StageDescriptor]>([])

    /// Registers `stages` with the host; returns what `pipeline_plugin_register` must return.
    public static func register(_ types: [any Stage.Type], with registrar: PluginRegistrar?) -> Int32 {
        guard let registrar = registrar?.pointee else { return 1 }
        let descriptors = types.map { StageDescriptor($0, source: .compiledIn) }
        stages.withLock { $0 = descriptors }
        for (index, descriptor) in descriptors.enumerated() {
            let message: JSONValue
            do {
                message = [
                    "type": .string(descriptor.type), "summary": .string(descriptor.summary),
                    "optionSchema": try JSONValue(encoding: descriptor.optionSchema),
                    "outputSchema": try JSONValue(encoding: descriptor.outputSchema),
                ]
            } catch {
                registrar.fail(registrar.context, "cannot describe stage \(descriptor.type): \(error)")
                return 1
            }
            guard registrar.register_stage(registrar.context, Int32(index), message.serialized()) == 0 else { return 1 }
        }
        return 0
    }

    /// Starts stage `index` (called through `pipeline_plugin_start`).
    static func start(_ index: Int32, request text: String, host: pipeline_stage_host) -> UnsafeMutableRawPointer? {
        let bridge = HostBridge(host)
        guard let descriptor = stages.withLock({ $0.indices.contains(Int(index)) ? $0[Int(index)] : nil }),
            let request = try? JSONParser.parse(text).value, let item = try? (request["item"] ?? .null).decode(as: InputItem.self)
        else {
            bridge.finish(.fatal, "the plugin cannot run stage \(index) with this request")
            return nil
        }
        let context = StageContext(
            stageID: request["stageID"]?.stringValue ?? descriptor.type, stageType: descriptor.type, item: item,
            attempt: request["attempt"]?.intValue ?? 1, logger: Logger(label: descriptor.type) { _ in HostLogHandler(bridge: bridge) },
            scratchFolder: URL(fileURLWithPath: request["scratchFolder"]?.stringValue ?? NSTemporaryDirectory()),
            services: ServiceValues(), resumeData: request["resume"] == .null ? nil : request["resume"], checkpointer: bridge,
            progress: bridge.progress)
        let options = request["options"] ?? .object([:])
        // The handle stays valid until the run has called finish (the host cancels only before that).
        let handle = Unmanaged.passRetained(RunningStage())
        let owner = UnsafeSendable(handle)
        handle.takeUnretainedValue().task.withLock { task in
            task = Task {
                do {
                    let outputs = try await descriptor.run(options: options, context: context)
                    bridge.finish(.succeeded, outputs.serialized())
                } catch is CancellationError {
                    bridge.finish(.cancelled, "")
                } catch {
                    switch (error as? any ClassifiedError)?.disposition ?? .fatal {
                    case .retryable: bridge.finish(.retryable, "\(error)")
                    case .credentialsExpired: bridge.finish(.credentialsExpired, "\(error)")
                    case .fatal: bridge.finish(.fatal, "\(error)")
                    }
                }
                owner.value.release()
            }
        }
        return handle.toOpaque()
    }
}

/// A started run: the host's handle, released when the run has finished.
final class RunningStage: Sendable {
    let task = Mutex<Task<Void, Never>?>(nil)
}

/// Carries the retained handle into the run's task, which releases it at the end.
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}

/// The host's callbacks, as the stage API wants them.
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

    func progress(_ progress: StageProgress) {
        let unit: Int32 = progress.unit == .bytes ? 0 : progress.unit == .seconds ? 1 : 2
        host.progress(host.context, progress.completed, progress.total ?? -1, unit)
    }

    func log(_ level: Logger.Level, _ message: String) {
        let levels: [Logger.Level] = [.trace, .debug, .info, .notice, .warning, .error, .critical]
        host.log(host.context, Int32(levels.firstIndex(of: level) ?? 2), message)
    }

    func saveResume(_ value: JSONValue) throws {
        guard host.checkpoint(host.context, value.serialized()) == 0 else { throw StageFailure("the host could not save the checkpoint") }
    }

    func intent(_ name: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        guard host.idempotency_key(host.context, name, &buffer, buffer.count) == 0 else {
            throw StageFailure("the host could not record the idempotency key \(name)")
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
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

/// Starts a stage run for the host.
@_cdecl("pipeline_plugin_start")
public func pipelinePluginStart(_ stage: Int32, _ request: UnsafePointer<CChar>?, _ host: UnsafePointer<pipeline_stage_host>?) -> UnsafeMutableRawPointer? {
    guard let request, let host else { return nil }
    return PluginExport.start(stage, request: String(cString: request), host: host.pointee)
}

/// Cancels a run for the host, and releases the run's handle.
@_cdecl("pipeline_plugin_cancel")
public func pipelinePluginCancel(_ handle: UnsafeMutableRawPointer?) {
    guard let handle else { return }
    Unmanaged<RunningStage>.fromOpaque(handle).takeUnretainedValue().task.withLock { $0?.cancel() }
}
