import StageKit

/// A stage type whose declarations the engine could not act on (``Stage/inputFileOption``,
/// ``Stage/landingOutput``, ``Stage/streamRole``): refused when it is registered, with what to declare instead,
/// rather than streaming, probing or reporting the wrong thing unseen.
public struct StageDeclarationError: Error, Sendable, CustomStringConvertible {
    /// The stage type.
    public var stageType: String
    /// What is wrong and what to declare instead.
    public var message: String

    /// A refusal of `stageType`'s declarations.
    public init(stageType: String, message: String) {
        self.stageType = stageType
        self.message = message
    }

    public var description: String { "stage type \"\(stageType)\" is refused: \(message)" }
}

extension StageDescriptor {
    /// A declared option or output name; nil for the empty one (``Stage/noOption``, ``Stage/noOutput``).
    static func named(_ name: String) -> String? {
        name.isEmpty ? nil : name
    }

    /// Refuses a stage type's declarations the engine could not act on, once, when the type is described, so that
    /// nothing after has to guess: the input-file option must be one of `options` (not checked when `options` is
    /// nil: they are read later), the landing output one of `outputs`; a follower must name the option a workflow
    /// sets to the export's file, a producer the output that names the file it writes.
    static func check(
        _ stageType: String, streamRole: StreamRole, inputFileOption: String?, landingOutput: String?,
        options: OptionSchema?, outputs: OutputSchema
    ) throws(StageDeclarationError) {
        func refuse(_ message: String) -> StageDeclarationError {
            StageDeclarationError(stageType: stageType, message: message)
        }
        func list(_ names: [String]) -> String {
            names.isEmpty ? "it has none" : names.joined(separator: ", ")
        }
        if let landingOutput, !outputs.contains(landingOutput) {
            throw refuse(
                "its landingOutput \"\(landingOutput)\" is not one of its outputs (\(list(outputs.fields.map(\.name)))): declare the output that says where its result landed, or noOutput"
            )
        }
        if let options, let inputFileOption, options.field(named: inputFileOption) == nil,
            options.additionalFields == nil
        {
            throw refuse(
                "its inputFileOption \"\(inputFileOption)\" is not one of its options (\(list(options.fields.map(\.name)))): declare the option that names the file it reads, or noOption"
            )
        }
        switch streamRole {
        case .follower where inputFileOption == nil:
            throw refuse(
                "it follows an export (streamRole follower) but names no option for the file it reads: declare inputFileOption, the option a workflow sets to the export's file"
            )
        case .producer where landingOutput == nil:
            throw refuse(
                "it writes a stream (streamRole producer) but names no output for the file it writes: declare landingOutput"
            )
        default:
            break
        }
    }
}
