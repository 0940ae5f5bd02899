import Foundation
import PipelineKit
import Testing

@testable import StageKit

/// Credentials several stages take.
private struct Credentials: StageOptions {
    @Option("Key id.") var keyId: String?
    @Option("Secret.") var secret: String?
}

/// A connection that embeds the credentials.
private struct Connection: StageOptions {
    @Option("The API.") var api = "https://api.example"
    @OptionGroup var credentials: Credentials
    @Option("Seconds to wait.", exclusiveMinimum: 0) var timeout = TimeSpan(seconds: 30)
}

private struct ConnectedStage: Stage {
    struct Options: StageOptions {
        @OptionGroup var connection: Connection
        @Option("The video.") var video: String
    }

    struct Outputs: StageOutputs {
        @Output("What the stage read.") var read = JSONValue.null
    }

    static let stageType = "test.connected"
    static let summary = "Reads grouped options (tests only)."

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let connection = options.connection
        return Outputs(read: [
            "api": .string(connection.api), "keyId": connection.credentials.keyId.map(JSONValue.string) ?? .null,
            "timeout": .int(Int(connection.timeout.seconds)), "video": .string(options.video),
        ])
    }
}

@Suite struct OptionGroupTests {
    private let harness = StageHarness(stateFolder: FileManager.default.temporaryDirectory)

    /// A group's options, and those of the groups it embeds, stand flat in the stage's schema in the group's
    /// place: a workflow, `pipeline stages` and the JSON Schema see no group.
    @Test func aGroupsOptionsStandFlatInTheSchema() throws {
        let schema = ConnectedStage.optionSchema
        #expect(schema.fields.map(\.name) == ["api", "keyId", "secret", "timeout", "video"])
        #expect(schema.field(named: "timeout")?.boundsDescription == "of more than 0s")
        // The groups are the code's business: the schema's JSON (a plugin's registration) has none.
        #expect(try JSONValue(encoding: schema)["groups"] == nil)
    }

    /// The stage reads the flat options through its groups (a group's own group too), defaults included.
    @Test func theStageReadsFlatOptionsThroughItsGroups() async throws {
        let run = await harness.run(ConnectedStage.self, options: ["keyId": "k1", "video": "v"])
        let read = try run.outputs.get()["read"]
        #expect(read == ["api": "https://api.example", "keyId": "k1", "timeout": 30, "video": "v"])
    }

    /// `pipeline validate` takes the group's options by their own names and knows no option named after the
    /// group; a run refuses a group's option out of its bounds, and names a mistyped one by its flat path.
    @Test func validateAndRunsSeeTheFlatNames() async throws {
        var registry = StageRegistry()
        try registry.register(ConnectedStage.self)
        func problems(_ with: String) -> [String] {
            let json = """
                {"version": 1, "name": "x", "stages": [{"id": "a", "uses": "test.connected", "with": \(with)}]}
                """
            do {
                _ = try WorkflowLoader(registry: registry).load(data: Data(json.utf8), file: "wf.json")
                return []
            } catch {
                return error.diagnostics.map { "\($0.path): \($0.message)" }
            }
        }
        #expect(problems(#"{"video": "v", "api": "https://b", "secret": "s", "timeout": "5s"}"#).isEmpty)
        #expect(
            problems(#"{"video": "v", "connection": {"api": "https://b"}}"#) == [
                #"stages[0].with.connection: unknown option "connection""#
            ])
        let zero = await harness.run(ConnectedStage.self, options: ["video": "v", "timeout": 0])
        #expect(
            failure(zero)?.message == "invalid option with.timeout: expected a duration of more than 0s, found 0")
        let mistyped = await harness.run(ConnectedStage.self, options: ["video": "v", "keyId": 5])
        #expect(failure(mistyped)?.message.hasPrefix("invalid option with.keyId: ") == true)
        #expect(failure(mistyped)?.kind == .invalidOptions)
    }

    private func failure(_ run: StageHarness.Run) -> StageFailure? {
        guard case .failure(let error as StageFailure) = run.outputs else { return nil }
        return error
    }
}
