import Foundation
import StageKit
import StageRuntime
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

        struct Outputs: StageOutputs {
            @Output("The file.") var movie = ""
            @Output("Frames.") var frames = 0
        }

        static let stageType = "test.export"
        static let summary = "Exports (tests only)."
        static let readsMediaInput = true
        static let streamRole = StreamRole.producer
        // Declared as literals: the requirements are `String`, so this is the declaration (see
        // theDeclarationsAreTheStagesLiteralsAndTheDefaultsTheConventions).
        static let inputFileOption = "clip"
        static let landingOutput = "movie"

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

        struct Outputs: StageOutputs {
            @Output("Where it went.") var place = ""
            @Output("Not this.") var path = ""
        }

        static let stageType = "test.mirror"
        static let summary = "Mirrors (tests only)."
        static let streamRole = StreamRole.follower
        static let inputFileOption = "source"
        static let landingOutput = "place"

        static func streamRefusal(with options: JSONValue, inputs: InputSummary) -> String? {
            options["target"] == nil ? nil : "a target is not streamed"
        }

        init() {}

        func run(_ options: Options, context: StageContext) async throws -> Outputs {
            Outputs(place: "mirror://\(options.target ?? "default")", path: "/not/the/landing")
        }
    }

    /// The options of the stages below: a file, named as the convention names it.
    struct FileOptions: StageOptions {
        @Option("The file.") var file: String?
    }

    /// A media stage written before stages declared their input file and landing: the conventions apply.
    struct Conventional: Stage {
        typealias Options = FileOptions
        static let stageType = "test.conventional"
        static let summary = "Declares nothing (tests only)."
        // `url` comes before `path` in the convention, whatever the order here.
        struct Outputs: StageOutputs {
            @Output("A name.") var name = ""
            @Output("Not the landing.") var path = ""
            @Output("The landing.") var url = ""
        }
        static let readsMediaInput = true
        init() {}
        func run(_ options: Options, context: StageContext) async throws -> Outputs {
            Outputs(name: "n", path: "/not/the/landing", url: "conventional://landed")
        }
    }

    /// The same stage, declaring that it has neither.
    struct Undeclared: Stage {
        typealias Options = FileOptions
        static let stageType = "test.undeclared"
        static let summary = "Declares none (tests only)."
        typealias Outputs = Conventional.Outputs
        static let readsMediaInput = true
        static let inputFileOption = noOption
        static let landingOutput = noOutput
        init() {}
        func run(_ options: Options, context: StageContext) async throws -> Outputs {
            Outputs(name: "n", path: "/p", url: "undeclared://not-landed")
        }
    }

    /// Hands the stages of ``aFollowerIsToldWhenTheExportsFileIsGone()`` to each other: the follower says it follows
    /// the export, and only then does the export end.
    private static let following = AsyncStream<Void>.makeStream()

    /// A producer that says it wrote a file that is not there, once its follower follows it.
    struct Vanishing: Stage {
        typealias Options = FileOptions
        static let stageType = "test.vanishing"
        static let summary = "Writes no file (tests only)."
        struct Outputs: StageOutputs {
            @Output("The file it did not write.") var path = ""
        }
        static let streamRole = StreamRole.producer
        init() {}
        func run(_ options: Options, context: StageContext) async throws -> Outputs {
            guard let stream = context.services[ExportStreamKey.self] else { throw StageFailure("nobody follows") }
            let path = context.scratchFolder.appendingPathComponent("gone.mp4").path
            stream.open(destination: path, writing: path + ".partial", head: 0)
            for await _ in StageDeclarationTests.following.stream { break }
            return Outputs(path: path)
        }
    }

    /// A follower that waits for its export to end, and fails with what it was told when the export has no file.
    struct Waiting: Stage {
        typealias Options = FileOptions
        static let stageType = "test.waiting"
        static let summary = "Waits for an export (tests only)."
        struct Outputs: StageOutputs {}
        static let streamRole = StreamRole.follower
        init() {}
        func run(_ options: Options, context: StageContext) async throws -> Outputs {
            guard let export = context.services[FollowedExportKey.self] else { throw StageFailure("follows nothing") }
            var state = try await export.waitFor(bytes: 1, of: 0)
            StageDeclarationTests.following.continuation.yield()
            while state.finishedSize == nil, state.failure == nil {
                state = try await export.waitFor(bytes: .max, of: state.attempt)
            }
            if let failure = state.failure { throw StageFailure(failure) }
            return Outputs()
        }
    }

    private let registry: StageRegistry = {
        var registry = Sandbox.registry
        do {
            try registry.register(Export.self)
            try registry.register(Mirror.self)
            try registry.register(Conventional.self)
            try registry.register(Undeclared.self)
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
        // Derived from the stages: a workflow whose stages change streams as they say.
        var edited = workflow
        edited.stages[1].stream = false
        #expect(edited.streaming.follows.isEmpty)

        let other = problems(
            #"{"id": "up", "uses": "test.mirror", "after": ["export"], "stream": true, "with": {"source": "${export.frames}"}}"#
        )
        #expect(
            other.count == 1
                && other[0].hasSuffix(
                    #"stages[1].with.source: a streaming stage reads the file of the export it follows: set source to "${EXPORT.movie}", the file output of a stage it waits for (test.export)"#
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
                    "${export.frames}: a streaming stage starts before stage \"export\" finishes, when only its movie is known"
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
                    "test.probe cannot stream an export: only a stage that follows an export (test.mirror) streams"
                )
            }, "\(probe)")
        let schema = WorkflowSchema.generate(registry: registry)
        let stream = schema["$defs"]?["stage"]?["properties"]?["stream"]?["description"]?.stringValue ?? ""
        #expect(
            stream
                == "A stage that follows an export, given ${export.path}, starts when the export starts and reads the file as it is written (test.mirror).",
            "\(stream)")
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

    /// What a stage declares is its literals (`static let inputFileOption = "clip"`: a `String`, the requirement's
    /// type), `noOption` and `noOutput` declare none, and a stage that declares nothing gets what the engine assumed
    /// of every stage before: the option `file`, the first of `link`, `url`, `location`, `path`.
    @Test func theDeclarationsAreTheStagesLiteralsAndTheDefaultsTheConventions() throws {
        let export = try StageDescriptor(Export.self, source: .compiledIn)
        #expect(export.inputFileOption == "clip" && export.landingOutput == "movie")
        let conventional = try StageDescriptor(Conventional.self, source: .compiledIn)
        #expect(conventional.inputFileOption == "file" && conventional.landingOutput == "url")
        let undeclared = try StageDescriptor(Undeclared.self, source: .compiledIn)
        #expect(undeclared.inputFileOption == nil && undeclared.landingOutput == nil)

        func needsMedia(_ uses: String, _ with: String) throws -> Bool {
            let workflow = try WorkflowLoader(registry: registry).load(
                data: Data(#"{"version": 1, "stages": [{"id": "a", "uses": "\#(uses)", "with": \#(with)}]}"#.utf8),
                file: "wf.json")
            return BatchPlanner(workflow: workflow, registry: registry).needsMedia
        }
        // As before stages declared it: the input file is read unless `file` names another.
        #expect(try needsMedia("test.conventional", "{}"))
        #expect(try needsMedia("test.conventional", #"{"file": "${input.path}"}"#))
        #expect(try !needsMedia("test.conventional", #"{"file": "other.mov"}"#))
        // A stage that names no input-file option reads the input file, whatever its options say.
        #expect(try needsMedia("test.undeclared", #"{"file": "other.mov"}"#))
    }

    @Test func aStageThatDeclaresNoLandingGetsTheConventionalOne() async throws {
        let sandbox = try Sandbox()
        for (uses, landed) in [("test.conventional", "conventional://landed"), ("test.undeclared", nil)] {
            let log = EventLog()
            try await sandbox.run(
                #"{"version": 1, "name": "\#(uses)", "stages": [{"id": "a", "uses": "\#(uses)"}]}"#, log: log,
                registry: registry)
            #expect(log.all(ItemFinished.self).map(\.landed) == [landed], "\(uses)")
        }
    }

    /// Declarations the engine could not act on are refused when the stage type is registered, saying what to
    /// declare.
    @Test func declarationsTheEngineCannotActOnAreRefusedWhenRegistered() {
        struct OtherLanding: Stage {
            typealias Options = FileOptions
            static let stageType = "test.other-landing"
            static let summary = "Lands at an output it lacks (tests only)."
            struct Outputs: StageOutputs { @Output("Its address.") var uri = "" }
            static let landingOutput = "link"
            init() {}
            func run(_ options: Options, context: StageContext) async throws -> Outputs { Outputs() }
        }
        struct OtherInputFile: Stage {
            typealias Options = FileOptions
            static let stageType = "test.other-input"
            static let summary = "Reads media through an option it lacks (tests only)."
            struct Outputs: StageOutputs {}
            static let readsMediaInput = true
            static let inputFileOption = "clip"
            init() {}
            func run(_ options: Options, context: StageContext) async throws -> Outputs { Outputs() }
        }
        struct OptionlessFollower: Stage {
            typealias Options = JSONValue
            static let stageType = "test.optionless-follower"
            static let summary = "Follows without an option for the file (tests only)."
            struct Outputs: StageOutputs { @Output("Where it went.") var url = "" }
            static let streamRole = StreamRole.follower
            init() {}
            func run(_ options: Options, context: StageContext) async throws -> Outputs { Outputs() }
        }
        struct FilelessProducer: Stage {
            typealias Options = FileOptions
            static let stageType = "test.fileless-producer"
            static let summary = "Writes a stream without an output for the file (tests only)."
            struct Outputs: StageOutputs { @Output("Frames.") var frames = 0 }
            static let streamRole = StreamRole.producer
            init() {}
            func run(_ options: Options, context: StageContext) async throws -> Outputs { Outputs() }
        }
        let cases: [(any Stage.Type, String)] = [
            (
                OtherLanding.self,
                #"stage type "test.other-landing" is refused: its landingOutput "link" is not one of its outputs (uri): declare the output that says where its result landed, or noOutput"#
            ),
            (
                OtherInputFile.self,
                #"stage type "test.other-input" is refused: its inputFileOption "clip" is not one of its options (file): declare the option that names the file it reads, or noOption"#
            ),
            (
                OptionlessFollower.self,
                #"stage type "test.optionless-follower" is refused: it follows an export (streamRole follower) but names no option for the file it reads: declare inputFileOption, the option a workflow sets to the export's file"#
            ),
            (
                FilelessProducer.self,
                #"stage type "test.fileless-producer" is refused: it writes a stream (streamRole producer) but names no output for the file it writes: declare landingOutput"#
            ),
        ]
        for (stage, message) in cases {
            var registry = StageRegistry()
            do {
                try registry.register(stage)
                Issue.record("\(stage) was registered")
            } catch {
                #expect("\(error)" == message)
            }
            #expect(registry.all.isEmpty)
        }
    }

    /// An export whose file is not there when it finishes tells the stage that follows it so, not that it was
    /// skipped.
    @Test func aFollowerIsToldWhenTheExportsFileIsGone() async throws {
        var registry = registry
        try registry.register(Vanishing.self)
        try registry.register(Waiting.self)
        let sandbox = try Sandbox()
        let log = EventLog()
        _ = try? await sandbox.run(
            """
            {"version": 1, "name": "gone", "defaults": {"retry": {"attempts": 1}}, "stages": [
              {"id": "export", "uses": "test.vanishing"},
              {"id": "follow", "uses": "test.waiting", "after": ["export"], "stream": true,
               "with": {"file": "${export.path}"}}
            ]}
            """, log: log, registry: registry)
        let failure = log.all(StageFinished.self).first { $0.stage == "follow" }?.error?.message ?? ""
        #expect(failure.hasPrefix("the file of stage export, ") && failure.hasSuffix("gone.mp4, is gone"), "\(failure)")
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
