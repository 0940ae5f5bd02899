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
        @Option("With a default.") var count = 4
        @Option("Optional.") var note: String?
        @Option("A choice.") var speed = Speed.fast
        @Option("An object.") var limits = Limits()
        @Option("Anything.") var extra: JSONValue = .null
    }

    struct Outputs: Encodable, Sendable {
        var count: Int
        var note: String?
        var speed: String
        var maxSize: Int64
        var extra: JSONValue
    }

    static let stageType = "test.declared"
    static let summary = "Echoes its options (tests only)."
    static let outputSchema = OutputSchema([OutputField("count", "The count option.")])

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
    static let outputSchema = OutputSchema([])

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
