import CPipelinePlugin
import Foundation
import NIOConcurrencyHelpers
import PipelineKit
import StageKit

/// A plugin's start, cancel, outputs and stream refusal functions.
struct PluginCalls: Sendable {
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

/// The text a plugin hands to a callback during one call.
private final class TextAnswer: Sendable {
    let text = NIOLockedValueBox<String?>(nil)
}
