import Foundation
import PipelineKit
import PluginHost
import TestSupport
import Testing

@testable import PipelineCLI
@testable import StageKit

/// Every built-in stage keeps to what its declarations say (`pipeline stages`, `pipeline schema`, docs/stages.md):
/// the defaults it applies, the bounds it refuses, the outputs it produces.
@Suite struct StageCatalogTests {
    @Test(arguments: StageCatalog.shipped.builtIn.map { $0.stageType })
    func everyDefaultIsTheValueTheStageUses(stageType: String) throws {
        let stage = try #require(StageCatalog.shipped.builtIn.first { $0.stageType == stageType })
        try checkDefaults(of: stage)
    }

    /// A value outside an option's declared bounds is refused where every host decodes the options (after
    /// templates resolve), in `pipeline validate`'s words, before the stage does anything.
    @Test(arguments: StageCatalog.shipped.builtIn.map { $0.stageType })
    func everyDeclaredBoundIsRefusedAtRunTime(stageType: String) throws {
        let stage = try #require(StageCatalog.shipped.builtIn.first { $0.stageType == stageType })
        try checkBounds(of: stage)
    }

    /// The outputs a stage encodes are the ones its schema names, no more: the schema is read from the same
    /// declarations the outputs are encoded from. Only an optional output that is nil is left out.
    @Test(arguments: StageCatalog.shipped.builtIn.map { $0.stageType })
    func everyOutputIsInTheSchema(stageType: String) throws {
        let stage = try #require(StageCatalog.shipped.builtIn.first { $0.stageType == stageType })
        try checkOutputs(of: stage)
    }

    /// docs/stages.md is what the built-in stages' declarations say.
    @Test func theCommittedStageReferenceIsCurrent() throws {
        let generated = StageReference.markdown(try StageCatalog.shipped.registry(plugins: []).all)
        let committed = try String(
            contentsOf: repositoryRoot.appendingPathComponent("docs/stages.md"), encoding: .utf8)
        #expect(committed == generated, "docs/stages.md is out of date: run make docs")
    }

    /// A stage run through the harness (as through the engine or a plugin) refuses an out-of-bounds value that
    /// only a template could have given it, before it opens the input.
    @Test func aBuiltInStageRefusesAResolvedValueOutOfBounds() async throws {
        let transcode = try #require(StageCatalog.shipped.builtIn.first { $0.stageType == "ffmpeg.transcode" })
        let outputs = await harnessRun(transcode, options: ["file": "/nonexistent.mov", "segmentJobs": 0])
        guard case .failure(let failure as StageFailure) = outputs else {
            Issue.record("the stage ran")
            return
        }
        #expect(failure.message == "invalid option with.segmentJobs: expected an integer from 1 to 16, found 0")
        #expect(failure.kind == .invalidOptions)
    }

    /// Decodes options that give only the required members, and compares each decoded option that has a
    /// default with that default.
    private func checkDefaults<S: Stage>(of stage: S.Type) throws {
        let schema = S.optionSchema
        // Decoded as a run decodes them, less the stage's own rules, which placeholders need not keep.
        let decoded = try schema.grouping(schema.applyingDefaults(to: minimalOptions(schema))).decode(as: S.Options.self)
        let values = Dictionary(uniqueKeysWithValues: decodedValues(of: decoded))
        for field in schema.fields {
            guard let defaultValue = field.defaultValue else { continue }
            #expect(values[field.name] == defaultValue, "\(S.stageType).\(field.name)")
        }
        #expect(!schema.fields.isEmpty || schema.additionalFields != nil, "\(S.stageType) declares no options")
    }

    /// The decoded value of each option by name: an `@Option` holds its value, an `@OptionGroup` the options of
    /// its group, which stand flat beside the others.
    private func decodedValues(of options: Any) -> [(String, JSONValue)] {
        Mirror(reflecting: options).children.flatMap { child -> [(String, JSONValue)] in
            guard let label = child.label else { return [] }
            if let value = child.value as? any Encodable {
                return [(String(label.dropFirst()), (try? JSONValue(encoding: value)) ?? .null)]
            }
            let group = Mirror(reflecting: child.value).children.first { $0.label == "wrappedValue" }
            return group.map { decodedValues(of: $0.value) } ?? []
        }
    }

    private func harnessRun<S: Stage>(_ stage: S.Type, options: JSONValue) async -> Result<JSONValue, any Error> {
        await StageHarness(stateFolder: FileManager.default.temporaryDirectory).run(stage, options: options).outputs
    }

    /// Each top-level bound of the stage's options broken in turn, the other options minimal.
    private func checkBounds<S: Stage>(of stage: S.Type) throws {
        let schema = S.optionSchema
        #expect(Set(schema.fields.map(\.name)).count == schema.fields.count, "\(S.stageType) declares a name twice")
        for field in schema.fields {
            guard let value = outside(field) else { continue }
            guard case .object(var options) = minimalOptions(schema) else { continue }
            options[field.name] = value
            #expect {
                try S.decodeOptions(.object(options))
            } throws: { error in
                guard let failure = error as? StageFailure, failure.kind == .invalidOptions else { return false }
                let broken = field.minimumCount.map { _ in "\(field.name) needs at least" } ?? "expected "
                return failure.message.hasPrefix("invalid option with.\(field.name): \(broken)")
            }
        }
    }

    /// A value of the option's type outside its bounds; nil when the type itself cannot hold one (a negative
    /// duration), or the option has no bounds.
    private func outside(_ field: OptionField) -> JSONValue? {
        if let count = field.minimumCount {
            guard case .array(let element) = field.type else { return nil }
            return .array(Array(repeating: placeholder(element), count: count - 1))
        }
        if let maximum = field.maximum { return JSONValue(bound: maximum + 1) }
        if let above = field.exclusiveMinimum { return JSONValue(bound: above) }
        guard let minimum = field.minimum else { return nil }
        // Sizes, bit rates and durations are never negative (nor is `nil` a `.null` here: JSONValue takes the literal).
        switch field.type {
        case .integer, .number: return JSONValue(bound: minimum - 1)
        case .size, .bitRate: return minimum >= 1 ? .some(JSONValue(bound: minimum - 1)) : .none
        default: return minimum > 0 ? .some(JSONValue(bound: minimum / 2)) : .none
        }
    }

    /// Encodes the stage's outputs as it declares them and compares the names with its schema.
    private func checkOutputs<S: Stage>(of stage: S.Type) throws {
        let declared = S.Outputs()
        let encoded = Set(try JSONValue(encoding: declared).objectValue?.keys.map { $0 } ?? [])
        let named = Set(S.outputSchema.fields.map(\.name))
        #expect(named.count == S.outputSchema.fields.count, "\(S.stageType) names an output twice")
        #expect(encoded.isSubset(of: named), "\(S.stageType) encodes \(encoded.subtracting(named).sorted())")
        let absentOptionals = Set(
            OutputDeclarations.children(of: declared).compactMap { name, declaration -> String? in
                guard case .output(let output) = declaration, output.presentValue == nil else { return nil }
                return name
            })
        #expect(named.subtracting(encoded) == absentOptionals, "\(S.stageType)")
    }

    private func minimalOptions(_ schema: OptionSchema) -> JSONValue {
        .object(
            Dictionary(uniqueKeysWithValues: schema.fields.filter(\.isRequired).map { ($0.name, placeholder($0)) })
        )
    }

    /// A value of the option's type within its bounds (an array of as few elements as it takes).
    private func placeholder(_ field: OptionField) -> JSONValue {
        guard case .array(let element) = field.type, let count = field.minimumCount else {
            return placeholder(field.type)
        }
        return .array(Array(repeating: placeholder(element), count: count))
    }

    private func placeholder(_ type: OptionType) -> JSONValue {
        switch type {
        case .string: "x"
        case .integer, .number, .size, .duration: 1
        case .bitRate: 1000
        case .boolean: true
        case .oneOf(let choices): .string(choices.first ?? "")
        case .array: []
        case .dictionary: [:]
        case .object(let schema): minimalOptions(schema)
        case .any: .null
        }
    }
}
