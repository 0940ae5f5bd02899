import Foundation
import PipelinePluginSDK
import StageKit

/// `hello.greet`: writes a greeting for the input file, one line per step, checkpointing after each
/// step so that a killed run continues where it stopped.
struct HelloStage: Stage {
    struct Options: StageOptions {
        /// Who to greet.
        @Option("Who to greet.") var name: String
        /// Where the greeting goes.
        @Option("The file to write.") var output: String
        /// How many lines (one per step).
        @Option("Lines to write.") var steps = 3
        /// Seconds between steps.
        @Option("Seconds between lines.") var pause = 0.0
    }

    struct Outputs: StageOutputs {
        @Output("The greeting file.") var path = ""
        @Output("Lines written.") var lines = 0
    }

    /// What the stage checkpoints: the lines already written.
    struct Progress: Codable {
        var written: Int
    }

    static let stageType = "hello.greet"
    static let summary = "Writes a greeting, one checkpointed line per step (a sample plugin)."

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let steps = options.steps
        var written = context.lastCheckpoint(as: Progress.self)?.written ?? 0
        if written > 0 { context.logger.info("resuming at line \(written + 1) of \(steps)") }
        let url = URL(fileURLWithPath: options.output)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        var lines = (try? String(contentsOf: url, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
        lines = Array(lines.prefix(written))
        while written < steps {
            try await Task.sleep(for: .milliseconds(Int(options.pause * 1000)))
            lines.append("hello, \(options.name) (\(written + 1)/\(steps))")
            try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
            written += 1
            try await context.checkpoint(Progress(written: written))
            context.reportProgress(StageProgress(completed: Int64(written), total: Int64(steps), unit: .items))
        }
        return Outputs(path: url.path, lines: written)
    }
}

/// The plugin's entry point: registers its stages with the host.
@_cdecl("pipeline_plugin_register")
public func registerStages(_ registrar: PluginRegistrar?) -> Int32 {
    PluginExport.register([HelloStage.self, SendStage.self, FollowStage.self], with: registrar)
}
