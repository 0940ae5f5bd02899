import Foundation
import PipelineKit
import Testing

@testable import StageKit

/// The outputs of an upload, shared as a group.
private struct Stored: StageOutputs {
    @Output("The object's URL.") var location = ""
    @Output("Bytes stored.") var size: Int64 = 0
}

/// Outputs of every kind: plain, optional, conditional, grouped.
private struct Produced: StageOutputs, Decodable {
    @Output("The file.") var path = ""
    @Output("Its width, when it has one.") var width: Int? = nil
    @Output("The receipt, with the option receipt.", whenGiven: "receipt") var receipt: String? = nil
}

private struct Uploaded: StageOutputs {
    @Output("The upload's id.") var id = ""
    @OutputGroup var stored = Stored()
}

/// A stored property that is no output: it has no summary, so it cannot reach the JSON.
private struct Undeclared: StageOutputs {
    @Output("The file.") var path = ""
    var secret = "not an output"
}

private struct ProducingStage: Stage {
    struct Options: StageOptions {
        @Option("Write a receipt.") var receipt: String?
    }
    typealias Outputs = Produced
    static let stageType = "test.producing"
    static let summary = "Produces outputs of every kind (tests only)."
    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        Outputs(path: "/out/a.mp4", width: 1920, receipt: options.receipt)
    }
}

@Suite struct StageOutputsTests {
    private func names(_ outputs: JSONValue) -> Set<String> {
        Set(outputs.objectValue.map { Array($0.keys) } ?? [])
    }

    /// The schema is read from the `@Output` declarations, in order, with their summaries; a group's outputs
    /// stand in its place.
    @Test func theSchemaIsReadFromTheDeclarations() {
        #expect(
            Produced.outputSchema.fields == [
                OutputField("path", "The file."), OutputField("width", "Its width, when it has one."),
                OutputField("receipt", "The receipt, with the option receipt.", whenGiven: "receipt"),
            ])
        #expect(Uploaded.outputSchema.fields.map(\.name) == ["id", "location", "size"])
        #expect(!Uploaded.outputSchema.isOpen && JSONValue.outputSchema.isOpen)
    }

    /// The JSON has exactly the declared names: an optional's nil is left out, a group's outputs stand beside
    /// the others, and the values encode as the plain values they hold.
    @Test func theOutputsEncodeAsTheSchemaNamesThem() throws {
        let full = try JSONValue(encoding: Produced(path: "/a", width: 640, receipt: "/r"))
        #expect(full == ["path": "/a", "width": 640, "receipt": "/r"])
        #expect(names(full) == Set(Produced.outputSchema.fields.map(\.name)))
        #expect(try JSONValue(encoding: Produced(path: "/a")) == ["path": "/a"])
        let uploaded = try JSONValue(encoding: Uploaded(id: "u1", stored: Stored(location: "https://x/a", size: 3)))
        #expect(uploaded == ["id": "u1", "location": "https://x/a", "size": 3])
        #expect(names(uploaded) == Set(Uploaded.outputSchema.fields.map(\.name)))
    }

    /// A stored property without `@Output` has no summary and no place in the schema: encoding refuses it, so it
    /// can never become an output that nothing documents, and a stage that returns it fails.
    @Test func anOutputWithoutASummaryCannotBeProduced() async throws {
        #expect(Undeclared.outputSchema.fields.map(\.name) == ["path"])
        #expect {
            try JSONValue(encoding: Undeclared())
        } throws: { error in
            "\(error)".contains("Undeclared.secret is not declared with @Output")
        }
    }

    /// Outputs read back from a checkpoint decode as they were encoded, an absent optional as nil.
    @Test func outputsDecodeAsTheyWereEncoded() throws {
        let outputs = Produced(path: "/a", width: 640)
        let decoded = try JSONValue(encoding: outputs).decode(as: Produced.self)
        #expect(decoded.path == "/a" && decoded.width == 640 && decoded.receipt == nil)
    }

    /// An output given only with an option is no output of a `with` that leaves the option out: validate refuses a
    /// reference to it then, in the stage's words.
    @Test func anOutputGivenOnlyWithAnOptionExistsOnlyWithIt() throws {
        #expect(ProducingStage.outputSchema(for: [:]).fields.map(\.name) == ["path", "width"])
        #expect(
            ProducingStage.outputSchema(for: ["receipt": "r.txt"]).fields.map(\.name) == ["path", "width", "receipt"])
        var registry = StageRegistry()
        try registry.register(ProducingStage.self)
        let json = """
            {"version": 1, "name": "x", "stages": [
              {"id": "a", "uses": "test.producing"},
              {"id": "b", "uses": "test.producing", "with": {"receipt": "${a.receipt}"}}
            ]}
            """
        do {
            _ = try WorkflowLoader(registry: registry).load(data: Data(json.utf8), file: "wf.json")
            Issue.record("the workflow was taken")
        } catch {
            #expect(error.diagnostics.contains { $0.message.contains(#"has no output "receipt"; it has path, width"#) })
        }
    }
}
