import Foundation
import PipelineKit
import StageKit
import Synchronization
import Testing

/// A stage whose options exercise every way of declaring one.
private struct DeclaredStage: Stage {
    enum Speed: String, OptionChoice { case slow, fast }

    struct Limits: NestedOptions {
        @Option("Largest size.") var maxSize = ByteCount(1 << 20)
        @Option("Shortest duration.") var minDuration: TimeSpan?
    }

    struct Options: StageOptions {
        @Option("Required.") var name: String
        @Option("With a default.", minimum: 1, maximum: 100) var count = 4
        @Option("Optional.") var note: String?
        @Option("A choice.") var speed = Speed.fast
        @Option("An object.") var limits = Limits()
        @Option("Anything.") var extra: JSONValue = .null
    }

    struct Outputs: StageOutputs {
        @Output("The count option.") var count = 0
        @Output("The note option, when given.") var note: String? = nil
        @Output("The speed option.") var speed = ""
        @Output("The limits' largest size.") var maxSize: Int64 = 0
        @Output("The extra option.") var extra = JSONValue.null
    }

    static let stageType = "test.declared"
    static let summary = "Echoes its options (tests only)."

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        Outputs(
            count: options.count, note: options.note, speed: options.speed.rawValue,
            maxSize: options.limits.maxSize.bytes, extra: options.extra)
    }
}

/// A stage that counts how often its option schema is made.
private struct CountedSchemaStage: Stage {
    static let schemasMade = Atomic<Int>(0)

    struct Options: StageOptions {
        static var optionSchema: OptionSchema {
            CountedSchemaStage.schemasMade.add(1, ordering: .relaxed)
            return OptionSchema(additionalFields: .any)
        }
    }

    static let stageType = "test.counted-schema"
    static let summary = "Counts its schema (tests only)."

    func run(_ options: Options, context: StageContext) async throws -> JSONValue { [:] }
}

@Suite struct StageSDKTests {
    @Test func theSchemaIsReadFromTheDeclarations() throws {
        let schema = DeclaredStage.optionSchema
        #expect(schema.fields.map(\.name) == ["name", "count", "note", "speed", "limits", "extra"])
        let byName = Dictionary(uniqueKeysWithValues: schema.fields.map { ($0.name, $0) })
        #expect(byName["name"]?.isRequired == true && byName["name"]?.defaultValue == nil)
        #expect(byName["count"]?.isRequired == false && byName["count"]?.defaultValue == 4)
        #expect(byName["note"]?.isRequired == false && byName["note"]?.defaultValue == nil)
        #expect(byName["speed"]?.type == .oneOf(["slow", "fast"]) && byName["speed"]?.defaultValue == "fast")
        #expect(byName["extra"]?.type == .any && byName["extra"]?.defaultValue == .null)
        guard case .object(let limits) = byName["limits"]?.type else {
            Issue.record("limits is not an object of options")
            return
        }
        #expect(limits.fields.map(\.name) == ["maxSize", "minDuration"])
        #expect(limits.field(named: "maxSize")?.type == .size)
        #expect(byName["limits"]?.defaultValue == ["maxSize": .int(1 << 20)])
    }

    /// A number option's bounds reach the field, the JSON Schema editors check and `pipeline validate`, which
    /// refuses a literal outside them before anything runs (a template is checked when it is resolved).
    @Test func theBoundsOfANumberOptionAreCheckedBeforeAnythingRuns() throws {
        let field = try #require(DeclaredStage.optionSchema.field(named: "count"))
        #expect(field.minimum == 1 && field.maximum == 100 && field.boundsDescription == "from 1 to 100")
        #expect(field.admits(1) && field.admits(100) && !field.admits(0) && !field.admits(101))
        var registry = StageRegistry()
        try registry.register(DeclaredStage.self)
        let schema = WorkflowSchema.generate(registry: registry)
        let stages = schema["$defs"]?["stage"]?["allOf"]?.arrayValue ?? []
        let with = stages.first?["then"]?["properties"]?["with"]?["anyOf"]?.arrayValue?.first
        let count = with?["properties"]?["count"]?["anyOf"]?.arrayValue?.first
        #expect(count == ["type": "integer", "minimum": 1, "maximum": 100], "\(String(describing: count))")
        func problems(_ count: String) -> [String] {
            let json = """
                {"version": 1, "name": "x", "stages": [{"id": "a", "uses": "test.declared", "with": {"name": "n", "count": \(count)}}]}
                """
            do {
                _ = try WorkflowLoader(registry: registry).load(data: Data(json.utf8), file: "wf.json")
                return []
            } catch {
                return error.diagnostics.map(\.message)
            }
        }
        #expect(problems("0") == ["expected an integer from 1 to 100, found 0"])
        #expect(problems("101") == ["expected an integer from 1 to 100, found 101"])
        #expect(problems("100").isEmpty && problems("\"${input.size}\"").isEmpty)
    }

    /// A duration option may be zero (`segmentSeconds: 0` never segments, `at: 0` is the first frame): the schema
    /// editors check accepts it, as `pipeline validate` does, while a stage's `timeout` stays positive.
    @Test func theSchemaTakesADurationOptionOfZeroAsValidateDoes() throws {
        var registry = StageRegistry()
        try registry.register(DeclaredStage.self)
        let schema = WorkflowSchema.generate(registry: registry)
        let with = schema["$defs"]?["stage"]?["allOf"]?.arrayValue?.first?["then"]?["properties"]?["with"]
        let limits = with?["anyOf"]?.arrayValue?.first?["properties"]?["limits"]?["anyOf"]?.arrayValue?.first
        let duration = limits?["properties"]?["minDuration"]?["anyOf"]?.arrayValue?.first
        #expect(duration == ["type": "number", "minimum": 0], "\(String(describing: duration))")
        let json = """
            {"version": 1, "name": "x", "stages": [{"id": "a", "uses": "test.declared", "with": {"name": "n", "limits": {"minDuration": 0}}}]}
            """
        #expect(throws: Never.self) {
            try WorkflowLoader(registry: registry).load(data: Data(json.utf8), file: "wf.json")
        }
        #expect(schema["$defs"]?["duration"]?["anyOf"]?.arrayValue?.first?["exclusiveMinimum"] == 0)
    }

    @Test func theStageSeesTheDefaultsTheSchemaShows() async throws {
        let run = await StageHarness(stateFolder: FileManager.default.temporaryDirectory)
            .run(DeclaredStage.self, options: ["name": "x", "limits": ["minDuration": "5s"]])
        let outputs = try run.outputs.get()
        let schema = DeclaredStage.optionSchema
        #expect(outputs["count"] == schema.field(named: "count")?.defaultValue)
        #expect(outputs["speed"] == schema.field(named: "speed")?.defaultValue)
        #expect(outputs["extra"] == schema.field(named: "extra")?.defaultValue)
        #expect(outputs["note"] == nil)
        // A nested object that is given still gets the defaults of the members it leaves out.
        #expect(outputs["maxSize"] == .int(1 << 20))
    }

    @Test func aMissingRequiredOptionOrAWrongTypeIsAnInvalidOptionsFailure() async throws {
        let harness = StageHarness(stateFolder: FileManager.default.temporaryDirectory)
        for options: JSONValue in [["count": 2], ["name": "x", "count": "many"], ["name": "x", "speed": "warp"]] {
            let run = await harness.run(DeclaredStage.self, options: options)
            #expect(throws: StageFailure.self) { try run.outputs.get() }
            if case .failure(let error as StageFailure) = run.outputs { #expect(error.kind == .invalidOptions) }
        }
    }

    @Test func aSecondStageOfTheSameNameIsRefusedNamingBothSources() throws {
        var registry = StageRegistry()
        try registry.register(DeclaredStage.self, source: .builtIn)
        #expect {
            try registry.register(DeclaredStage.self, source: .plugin("/tmp/libevil.so"))
        } throws: { error in
            let text = "\(error)"
            return text.contains("test.declared") && text.contains("plugin /tmp/libevil.so")
                && text.contains("built in")
        }
        #expect(registry.descriptor(for: "test.declared")?.source == .builtIn)
    }

    @Test func aSchemaIsMadeWhenFirstReadThenKept() throws {
        var registry = StageRegistry()
        try registry.register(CountedSchemaStage.self, source: .builtIn)
        // Registering every stage a command might use must not reflect over all their options.
        #expect(CountedSchemaStage.schemasMade.load(ordering: .relaxed) == 0)
        let descriptor = try #require(registry.descriptor(for: CountedSchemaStage.stageType))
        #expect(descriptor.optionSchema.additionalFields == .any)
        let copy = descriptor
        #expect(copy.optionSchema == descriptor.optionSchema)
        #expect(CountedSchemaStage.schemasMade.load(ordering: .relaxed) == 1)
    }

    @Test func failuresCarryTheirKindIntoEventsAndState() async throws {
        let sandbox = try Sandbox()
        let key = UUID().uuidString
        let log = EventLog()
        try await sandbox.run(
            """
            {"version": 1, "name": "t", "stages": [
              {"id": "a", "uses": "test.probe", "with": {"key": "\(key)", "failTimes": 5, "fatal": true}}
            ]}
            """, log: log)
        let finished = try #require(log.all(StageFinished.self).first { $0.stage == "a" })
        #expect(finished.error?.kind == .invalidInput)
        #expect(finished.json["errorKind"] == "invalid-input")
        #expect(log.all(ItemFinished.self).first?.error?.kind == .invalidInput)
        let record = try await sandbox.checkpoint("a")
        #expect(record?.errorKind == .invalidInput)
    }
}
