import Foundation
import StageKit
import Testing

@testable import PipelineKit

/// The engine takes what it needs of a stage from the stage type's declarations, whatever the names: a follower
/// whose file option is `source` follows a producer whose file output is `movie`, the refusals are the stages'
/// words, a media stage reads the input file through the option it names, and the result lands where the type says.
@Suite struct StageDeclarationTests {
    /// A producer whose file is `movie` and whose input file is `clip`.
    struct Export: Stage {
        struct Options: StageOptions {
            @Option("The input.") var clip: String?
            @Option("Writes the index at the end.") var slow = false
        }

        struct Outputs: Encodable, Sendable {
            var movie: String
            var frames: Int
        }

        static let stageType = "test.export"
        static let summary = "Exports (tests only)."
        static let outputSchema = OutputSchema([OutputField("movie", "The file."), OutputField("frames", "Frames.")])
        static let readsMediaInput = true
        static let streamRole = StreamRole.producer
        static let inputFileOption: String? = "clip"
        static let landingOutput: String? = "movie"

        static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
            if options["slow"] == .bool(true) { return "slow is true" }
            return inputs.isInputFile ? nil : "it reads \(inputs.path ?? "a file known only at run time")"
        }

        init() {}

        func run(_ options: Options, context: StageContext) async throws -> Outputs {
            Outputs(movie: "/exports/\(context.item.name)", frames: 1)
        }
    }

    /// A follower that reads `source` and lands at `place`.
    struct Mirror: Stage {
        struct Options: StageOptions {
            @Option("The file.") var source: String?
            @Option("Where it goes.") var target: String?
        }

        struct Outputs: Encodable, Sendable {
            var place: String
            var path: String
        }

        static let stageType = "test.mirror"
        static let summary = "Mirrors (tests only)."
        static let outputSchema = OutputSchema([
            OutputField("place", "Where it went."), OutputField("path", "Not this."),
        ])
        static let streamRole = StreamRole.follower
        static let inputFileOption: String? = "source"
        static let landingOutput: String? = "place"

        static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
            options["target"] == nil ? nil : "a target is not streamed"
        }

        init() {}

        func run(_ options: Options, context: StageContext) async throws -> Outputs {
            Outputs(place: "mirror://\(options.target ?? "default")", path: "/not/the/landing")
        }
    }

    private let registry: StageRegistry = {
        var registry = Sandbox.registry
        do {
            try registry.register(Export.self)
            try registry.register(Mirror.self)
        } catch {
            Issue.record("\(error)")
        }
        return registry
    }()

    /// The diagnostics of a workflow of an export and one more stage.
    private func problems(export: String = "{}", _ stage: String) -> [String] {
        let json = """
            {"version": 1, "name": "x", "inputs": {"path": "in"}, "stages": [
              {"id": "export", "uses": "test.export", "with": \(export)},
              \(stage)
            ]}
            """
        do {
            _ = try WorkflowLoader(registry: registry).load(data: Data(json.utf8), file: "wf.json")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func aFollowerFollowsTheProducerItsDeclaredOptionReferences() throws {
        let stage =
            #"{"id": "up", "uses": "test.mirror", "after": ["export"], "stream": true, "with": {"source": "${export.movie}"}}"#
        #expect(problems(stage).isEmpty, "\(problems(stage))")
        let workflow = try WorkflowLoader(registry: registry).load(
            data: Data(#"{"version": 1, "stages": [{"id": "export", "uses": "test.export"}, \#(stage)]}"#.utf8),
            file: "wf.json")
        #expect(workflow.streaming.follows == [1: 0])

        let other = problems(
            #"{"id": "up", "uses": "test.mirror", "after": ["export"], "stream": true, "with": {"source": "${export.frames}"}}"#
        )
        #expect(
            other.count == 1
                && other[0].hasSuffix(
                    #"stages[1].with.source: a streaming upload sends the file of the export it follows: set source to "${EXPORT.movie}", the file output of a stage it waits for (test.export)"#
                ), "\(other)")
        let frames = problems(
            #"{"id": "up", "uses": "test.mirror", "after": ["export"], "stream": true, "with": {"source": "${export.movie}", "target": "${export.frames}"}}"#
        )
        #expect(
            frames.contains {
                $0.hasSuffix("stages[1].stream: test.mirror cannot stream an export: a target is not streamed")
            }, "\(frames)")
        #expect(
            frames.contains {
                $0.contains(
                    "${export.frames}: a streaming upload starts before stage \"export\" finishes, when only its movie is known"
                )
            }, "\(frames)")
    }

    @Test func refusalsAreTheStagesOwnAndTheRestNameTheDeclaredRoles() {
        let stage =
            #"{"id": "up", "uses": "test.mirror", "after": ["export"], "stream": true, "with": {"source": "${export.movie}"}}"#
        #expect(
            problems(export: #"{"slow": true}"#, stage).contains {
                $0.hasSuffix(#"stage "export" cannot be streamed: slow is true"#)
            })
        #expect(
            problems(export: #"{"clip": "a.mov"}"#, stage).contains {
                $0.hasSuffix(#"stage "export" cannot be streamed: it reads a.mov"#)
            })
        #expect(problems(export: #"{"clip": "${input.path}"}"#, stage).isEmpty)
        let probe = problems(#"{"id": "up", "uses": "test.probe", "stream": true, "with": {"key": "k"}}"#)
        #expect(
            probe.contains {
                $0.hasSuffix(
                    "test.probe cannot stream an export: only an upload (test.mirror) streams the export it follows")
            }, "\(probe)")
        let schema = WorkflowSchema.generate(registry: registry)
        let stream = schema["$defs"]?["stage"]?["properties"]?["stream"]?["description"]?.stringValue ?? ""
        #expect(stream.hasSuffix("as it is written (test.mirror)."), "\(stream)")
    }

    @Test func aMediaStageReadsTheInputFileThroughTheOptionItNames() throws {
        func needsMedia(_ with: String) throws -> Bool {
            let workflow = try WorkflowLoader(registry: registry).load(
                data: Data(
                    #"{"version": 1, "stages": [{"id": "export", "uses": "test.export", "with": \#(with)}]}"#.utf8),
                file: "wf.json")
            return BatchPlanner(workflow: workflow, registry: registry).needsMedia
        }
        #expect(try needsMedia("{}"))
        #expect(try needsMedia(#"{"clip": "${input.path}"}"#))
        #expect(try !needsMedia(#"{"clip": "other.mov"}"#))
    }

    @Test func anItemLandsWhereItsLastLandingStageSays() async throws {
        let sandbox = try Sandbox()
        let log = EventLog()
        try await sandbox.run(
            #"{"version": 1, "name": "land", "stages": [{"id": "export", "uses": "test.export"}, {"id": "up", "uses": "test.mirror", "with": {"target": "t"}}]}"#,
            log: log, registry: registry)
        #expect(log.all(ItemFinished.self).map(\.landed) == ["mirror://t"])
    }
}
