import CPipelinePlugin
import Foundation
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
        if let refusal = versionRefusal(version, expected: expected) { throw refuse(refusal) }
        let register = try symbol("pipeline_plugin_register", as: pipeline_plugin_register_fn.self)
        let calls = PluginCalls(
            start: try symbol("pipeline_plugin_start", as: pipeline_plugin_start_fn.self),
            cancel: try symbol("pipeline_plugin_cancel", as: pipeline_plugin_cancel_fn.self),
            outputs: try symbol("pipeline_plugin_outputs", as: pipeline_plugin_outputs_fn.self),
            streamRefusal: try symbol("pipeline_plugin_stream_refusal", as: pipeline_plugin_stream_refusal_fn.self))

        var descriptors: [StageDescriptor] = []
        for (index, json) in try registeredStages(register, abi: expected, path: path) {
            descriptors.append(try describe(stage: index, json, calls: calls, path: path))
        }
        return descriptors
    }

    /// Why a plugin built for ABI `version` is refused by a host that speaks ABI `expected`, with what the versions
    /// in between added; nil when the two are the same. An older plugin is refused, not adapted: it cannot say what
    /// its stages consume, whether they retry themselves or stream, and guessing would run an upload outside
    /// `--transfers`, retry it twice or stream it.
    private static func versionRefusal(_ version: Int32, expected: Int32) -> String? {
        guard version != expected else { return nil }
        let added = Self.additions.filter { $0.version > version && $0.version <= expected }
        let since = added.map { "ABI \($0.version) adds \($0.what)" }.joined(separator: "; ")
        let why = since.isEmpty ? "" : " (\(since))"
        return
            "was built for plugin ABI \(version), but this pipeline speaks ABI \(expected)\(why): rebuild it against this pipeline's PipelinePluginSDK"
    }

    /// Calls the plugin's register function; returns the stages it registered, by number, with their
    /// descriptions, in the order it registered them.
    private static func registeredStages(
        _ register: pipeline_plugin_register_fn, abi: Int32, path: String
    ) throws(PluginError) -> [(Int32, String)] {
        let registration = Registration()
        var registrar = pipeline_plugin_registrar(
            abi_version: abi, context: Unmanaged.passUnretained(registration).toOpaque(),
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
            throw PluginError(
                path: path,
                message:
                    "failed to register its stages: \(registration.failure.withLockedValue { $0 } ?? "status \(status)")"
            )
        }
        return registration.stages.withLockedValue { $0 }
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

/// What a plugin registered while its register function ran.
private final class Registration: Sendable {
    let stages = NIOLockedValueBox<[(Int32, String)]>([])
    let failure = NIOLockedValueBox<String?>(nil)
}
