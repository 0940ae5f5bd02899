import Foundation
import Testing

@testable import PipelineKit
@testable import StageKit

/// A stage whose sizes, durations, bit rates and arrays have bounds, and whose options have a rule of their own.
private struct BoundedStage: Stage {
    struct Rendition: NestedOptions {
        @Option("Lines.", minimum: 16, maximum: 4320) var height = 720
        @Option("Bits per second.", minimum: 1000) var bitrate: BitRate?
    }

    struct Options: StageOptions {
        @Option("Bytes per part.", minimum: 5_242_880, maximum: 5_368_709_120) var partSize = ByteCount(8 << 20)
        @Option("Abort a request that sends nothing for this long.", exclusiveMinimum: 0)
        var stallTimeout = TimeSpan(seconds: 30)
        @Option("Seconds per segment.", minimum: 0.5, maximum: 60) var segmentSeconds = TimeSpan(seconds: 6)
        @Option("How long a link lasts.", minimum: 1, maximum: 604_800) var shareFor: TimeSpan?
        @Option("Renditions.", minimumCount: 1) var renditions: [Rendition]?
        @Option("Words; the first must not be empty.") var words: [String] = ["a"]

        static func problems(in with: JSONValue) -> [OptionProblem] {
            guard case .string("")? = with["words"]?.arrayValue?.first else { return [] }
            return [OptionProblem(at: JSONPath.root.appending("words").appending(index: 0), "the first word is empty")]
        }
    }

    struct Outputs: StageOutputs {}

    static let stageType = "test.bounded"
    static let summary = "Has bounded options (tests only)."
    func run(_ options: Options, context: StageContext) async throws -> Outputs { Outputs() }
}

@Suite struct OptionBoundsTests {
    private let registry: StageRegistry = {
        var registry = StageRegistry()
        try? registry.register(BoundedStage.self)
        return registry
    }()

    private func problems(_ with: String) -> [String] {
        let json = """
            {"version": 1, "name": "x", "stages": [{"id": "a", "uses": "test.bounded", "with": \(with)}]}
            """
        do {
            _ = try WorkflowLoader(registry: registry).load(data: Data(json.utf8), file: "wf.json")
            return []
        } catch {
            return error.diagnostics.map { "\($0.path): \($0.message)" }
        }
    }

    /// Bounds read in the units a workflow writes them in.
    @Test func boundsReadInTheOptionsOwnUnits() throws {
        let schema = BoundedStage.optionSchema
        #expect(schema.field(named: "partSize")?.boundsDescription == "from 5MiB to 5GiB")
        #expect(schema.field(named: "stallTimeout")?.boundsDescription == "of more than 0s")
        #expect(schema.field(named: "segmentSeconds")?.boundsDescription == "from 0.5s to 60s")
        #expect(schema.field(named: "shareFor")?.boundsDescription == "from 1s to 7d")
        #expect(schema.field(named: "renditions")?.boundsDescription == "of at least 1 element")
        guard case .array(.object(let rendition))? = schema.field(named: "renditions")?.type else {
            Issue.record("renditions is not an array of options")
            return
        }
        #expect(rendition.field(named: "bitrate")?.boundsDescription == "of 1k or more")
    }

    /// `pipeline validate` refuses a literal size, duration, bit rate or array outside the bounds, in a nested
    /// option too, and takes what is within them and templates (checked when they are resolved).
    @Test func validateRefusesQuantitiesOutsideTheirBounds() {
        #expect(
            problems(#"{"partSize": 0}"#) == ["stages[0].with.partSize: expected a size from 5MiB to 5GiB, found 0"])
        #expect(
            problems(#"{"partSize": "1MiB"}"#) == [
                #"stages[0].with.partSize: expected a size from 5MiB to 5GiB, found "1MiB""#
            ])
        #expect(
            problems(#"{"stallTimeout": 0}"#) == [
                "stages[0].with.stallTimeout: expected a duration of more than 0s, found 0"
            ])
        #expect(
            problems(#"{"segmentSeconds": "2m"}"#) == [
                #"stages[0].with.segmentSeconds: expected a duration from 0.5s to 60s, found "2m""#
            ])
        #expect(
            problems(#"{"renditions": []}"#) == [
                #"stages[0].with.renditions: stage "a" (test.bounded): renditions needs at least 1 element, found []"#
            ])
        #expect(
            problems(#"{"renditions": [{"bitrate": 999}]}"#) == [
                "stages[0].with.renditions[0].bitrate: expected a bit rate of 1k or more, found 999"
            ])
        #expect(
            problems(#"{"words": ["", "b"]}"#) == [
                #"stages[0].with.words[0]: stage "a" (test.bounded): the first word is empty"#
            ])
        let fine = [
            #"{"partSize": "5MiB", "stallTimeout": "250ms", "segmentSeconds": 0.5, "renditions": [{"bitrate": "1k"}]}"#,
            #"{"partSize": "${vars.size}", "stallTimeout": "${vars.stall}", "renditions": "${vars.list}"}"#,
            #"{"partSize": 5368709120, "segmentSeconds": "1m", "words": ["${vars.word}"]}"#,
        ]
        for with in fine {
            #expect(problems(with).allSatisfy { !$0.contains("expected") && !$0.contains("needs") }, "\(with)")
        }
    }

    /// A value `pipeline validate` cannot see (a template's) is refused once resolved, before the stage runs, by the
    /// same declaration and in the same words, whichever host runs the stage (here the harness); so is a value
    /// that breaks the stage's own rule.
    @Test func aRunRefusesAResolvedValueOutsideItsBoundsInValidatesWords() async {
        let harness = StageHarness(stateFolder: FileManager.default.temporaryDirectory)
        let refused: [(with: String, validate: String, run: String)] = [
            (
                #"{"partSize": 0}"#, "stages[0].with.partSize: expected a size from 5MiB to 5GiB, found 0",
                "with.partSize: expected a size from 5MiB to 5GiB, found 0"
            ),
            (
                #"{"stallTimeout": "0s"}"#,
                #"stages[0].with.stallTimeout: expected a duration of more than 0s, found "0s""#,
                #"with.stallTimeout: expected a duration of more than 0s, found "0s""#
            ),
            (
                #"{"renditions": [{"bitrate": 999}]}"#,
                "stages[0].with.renditions[0].bitrate: expected a bit rate of 1k or more, found 999",
                "with.renditions[0].bitrate: expected a bit rate of 1k or more, found 999"
            ),
            (
                #"{"renditions": []}"#,
                #"stages[0].with.renditions: stage "a" (test.bounded): renditions needs at least 1 element, found []"#,
                "with.renditions: renditions needs at least 1 element, found []"
            ),
            (
                #"{"words": ["", "b"]}"#,
                #"stages[0].with.words[0]: stage "a" (test.bounded): the first word is empty"#,
                "with.words[0]: the first word is empty"
            ),
        ]
        for (with, validate, run) in refused {
            #expect(problems(with) == [validate])
            let options = (try? JSONValue(parsing: Data(with.utf8))) ?? .null
            let outputs = await harness.run(BoundedStage.self, options: options).outputs
            guard case .failure(let failure as StageFailure) = outputs else {
                Issue.record("\(with) ran")
                continue
            }
            #expect(failure.message == "invalid option \(run)")
            #expect(failure.kind == .invalidOptions && failure.disposition == .fatal)
        }
        let fine = await harness.run(
            BoundedStage.self, options: ["partSize": "5MiB", "renditions": [["bitrate": "1k"]]])
        #expect(throws: Never.self) { try fine.outputs.get() }
    }

    /// The JSON Schema editors check carries the same bounds on the number (or array) a workflow may write.
    @Test func theSchemaCarriesTheBounds() throws {
        let schema = WorkflowSchema.generate(registry: registry)
        let with = schema["$defs"]?["stage"]?["allOf"]?.arrayValue?.first?["then"]?["properties"]?["with"]
        let properties = with?["anyOf"]?.arrayValue?.first?["properties"]
        func first(_ name: String) -> JSONValue? { properties?[name]?["anyOf"]?.arrayValue?.first }
        #expect(first("partSize") == ["type": "integer", "minimum": 5_242_880, "maximum": 5_368_709_120])
        #expect(first("stallTimeout") == ["type": "number", "exclusiveMinimum": 0])
        #expect(first("segmentSeconds") == ["type": "number", "minimum": 0.5, "maximum": 60])
        let renditions = try #require(first("renditions"))
        #expect(renditions["minItems"] == 1)
        let bitrate = renditions["items"]?["anyOf"]?.arrayValue?.first?["properties"]?["bitrate"]?["anyOf"]?
            .arrayValue?.first
        #expect(bitrate == ["type": "integer", "minimum": 1000])
        // An array without a minimum count has none in the schema.
        #expect(properties?["words"]?["anyOf"]?.arrayValue?.first?["minItems"] == nil)
    }
}
