import Foundation
import StageKit

struct FileSize: Stage {
    struct Options: StageOptions {
        @Option("The file.") var file: String
    }
    struct Outputs: StageOutputs {
        @Output("Its size.") var bytes = 0
    }

    static let stageType = "acme.size"
    static let summary = "Counts the bytes of a file."

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        guard let size = try? FileManager.default.attributesOfItem(atPath: options.file)[.size] as? Int else {
            // Fatal, of kind invalid-input; StageFailure.retryable(...) when trying again can help.
            throw StageFailure("cannot read \(options.file)", kind: .invalidInput)
        }
        return Outputs(bytes: size)
    }
}
