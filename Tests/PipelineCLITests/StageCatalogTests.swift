import Foundation
import PluginHost
import StageKit
import Testing

@testable import PipelineCLI

/// Every built-in stage applies exactly the defaults its schema shows (`pipeline stages`, `pipeline schema`).
@Suite struct StageCatalogTests {
    @Test(arguments: StageCatalog.shipped.builtIn.map { $0.stageType })
    func everyDefaultIsTheValueTheStageUses(stageType: String) throws {
        let stage = try #require(StageCatalog.shipped.builtIn.first { $0.stageType == stageType })
        try checkDefaults(of: stage)
    }

    /// Decodes options that give only the required members, and compares each decoded option that has a
    /// default with that default.
    private func checkDefaults<S: Stage>(of stage: S.Type) throws {
        let schema = S.optionSchema
        let decoded = try S.decodeOptions(minimalOptions(schema))
        let values = Dictionary(
            uniqueKeysWithValues: Mirror(reflecting: decoded).children.compactMap { child -> (String, JSONValue)? in
                guard let label = child.label, let value = child.value as? any Encodable else { return nil }
                return (String(label.dropFirst()), (try? JSONValue(encoding: value)) ?? .null)
            })
        for field in schema.fields {
            guard let defaultValue = field.defaultValue else { continue }
            #expect(values[field.name] == defaultValue, "\(S.stageType).\(field.name)")
        }
        #expect(!schema.fields.isEmpty || schema.additionalFields != nil, "\(S.stageType) declares no options")
    }

    private func minimalOptions(_ schema: OptionSchema) -> JSONValue {
        .object(
            Dictionary(uniqueKeysWithValues: schema.fields.filter(\.isRequired).map { ($0.name, placeholder($0.type)) })
        )
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
